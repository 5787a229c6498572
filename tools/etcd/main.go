// Command etcd runs etcd's own entry point: go.etcd.io/etcd/server/v3 ships etcdmain as a library
// package, and its buildable main lives in a module that pins a different dependency set.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }

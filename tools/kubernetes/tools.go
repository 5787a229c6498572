//go:build tools

// Package tools pins the commands this module builds: go build reads their versions from go.mod.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)

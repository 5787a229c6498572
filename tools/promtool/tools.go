//go:build tools

// Package tools pins the command this module builds: go build reads its version from go.mod.
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"

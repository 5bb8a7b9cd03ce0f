//go:build wasip1

package palisade

import (
	host "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_host"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

func hostLog(level LogLevel, message string) { host.Log(host.LogLevel(level), message) }

func hostProgress(progress, total float64, message string) {
	maybeTotal := witTypes.None[float64]()
	if total >= 0 {
		maybeTotal = witTypes.Some(total)
	}
	host.ReportProgress(progress, maybeTotal, optional(message))
}

func hostCancelled() bool { return host.IsCancelled() }

func hostRoots() []Root {
	roots := []Root{}
	for _, root := range host.ListRoots() {
		roots = append(roots, Root{URI: root.Uri, Name: root.Name.SomeOr(""), Path: root.GuestPath, Writable: root.Writable})
	}
	return roots
}

func hostEnv(name string) (string, bool) {
	value := host.GetEnv(name)
	return value.SomeOr(""), value.IsSome()
}

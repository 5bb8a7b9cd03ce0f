// Package export_palisade_plugin_tools is what the generated exports call for
// palisade:plugin/tools: the SDK's root package sets the functions in its init.
package export_palisade_plugin_tools

import (
	tools "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_tools"
	types "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

// Set by the SDK before any export is called.
var (
	ListToolsHook func() []tools.Tool
	CallToolHook  func(name string, arguments string) witTypes.Result[tools.CallResult, types.PluginError]
)

// ListTools is the export list-tools.
func ListTools() []tools.Tool { return ListToolsHook() }

// CallTool is the export call-tool.
func CallTool(name string, arguments string) witTypes.Result[tools.CallResult, types.PluginError] {
	return CallToolHook(name, arguments)
}

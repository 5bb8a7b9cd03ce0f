// Package export_palisade_plugin_prompts is what the generated exports call for
// palisade:plugin/prompts: the SDK's root package sets the functions in its init.
package export_palisade_plugin_prompts

import (
	prompts "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_prompts"
	types "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

// Set by the SDK before any export is called.
var (
	ListPromptsHook func() []prompts.Prompt
	GetPromptHook   func(name string, arguments []witTypes.Tuple2[string, string]) witTypes.Result[prompts.PromptResult, types.PluginError]
)

// ListPrompts is the export list-prompts.
func ListPrompts() []prompts.Prompt { return ListPromptsHook() }

// GetPrompt is the export get-prompt.
func GetPrompt(name string, arguments []witTypes.Tuple2[string, string]) witTypes.Result[prompts.PromptResult, types.PluginError] {
	return GetPromptHook(name, arguments)
}

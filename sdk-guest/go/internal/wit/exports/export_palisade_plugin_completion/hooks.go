// Package export_palisade_plugin_completion is what the generated exports call for
// palisade:plugin/completion: the SDK's root package sets the functions in its init.
package export_palisade_plugin_completion

import (
	completion "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_completion"
	types "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

// Set by the SDK before any export is called.
var (
	CompletableHook func() []completion.CompletionRef
	CompleteHook    func(target completion.CompletionRef, argument string, value string, context []witTypes.Tuple2[string, string]) witTypes.Result[completion.CompletionResult, types.PluginError]
)

// Completable is the export completable.
func Completable() []completion.CompletionRef { return CompletableHook() }

// Complete is the export complete.
func Complete(target completion.CompletionRef, argument string, value string, context []witTypes.Tuple2[string, string]) witTypes.Result[completion.CompletionResult, types.PluginError] {
	return CompleteHook(target, argument, value, context)
}

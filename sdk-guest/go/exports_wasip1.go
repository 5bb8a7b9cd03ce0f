//go:build wasip1

package palisade

import (
	"fmt"
	"os"

	"github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/export_palisade_plugin_completion"
	"github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/export_palisade_plugin_prompts"
	"github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/export_palisade_plugin_resources"
	"github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/export_palisade_plugin_tools"
	// The component's exports: linked in by importing the package.
	_ "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/exports/wit_exports"
	completion "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_completion"
	prompts "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_prompts"
	resources "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_resources"
	witTools "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_tools"
	types "github.com/palisade-mcp/palisade/sdk-guest/go/internal/wit/imports/palisade_plugin_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

func init() {
	export_palisade_plugin_tools.ListToolsHook = listTools
	export_palisade_plugin_tools.CallToolHook = callTool
	// This SDK serves tools; the other interfaces of the world are empty.
	export_palisade_plugin_resources.ListResourcesHook = func() []resources.Resource { return nil }
	export_palisade_plugin_resources.ListResourceTemplatesHook = func() []resources.ResourceTemplate { return nil }
	export_palisade_plugin_resources.ReadResourceHook = func(uri string) witTypes.Result[[]types.ResourceContents, types.PluginError] {
		return witTypes.Err[[]types.ResourceContents](toWitError(&PluginError{Code: CodeNotFound, Message: "this plugin has no resources"}))
	}
	export_palisade_plugin_prompts.ListPromptsHook = func() []prompts.Prompt { return nil }
	export_palisade_plugin_prompts.GetPromptHook = func(string, []witTypes.Tuple2[string, string]) witTypes.Result[prompts.PromptResult, types.PluginError] {
		return witTypes.Err[prompts.PromptResult](toWitError(&PluginError{Code: CodeNotFound, Message: "this plugin has no prompts"}))
	}
	export_palisade_plugin_completion.CompletableHook = func() []completion.CompletionRef { return nil }
	export_palisade_plugin_completion.CompleteHook = func(completion.CompletionRef, string, string, []witTypes.Tuple2[string, string]) witTypes.Result[completion.CompletionResult, types.PluginError] {
		return witTypes.Err[completion.CompletionResult](toWitError(&PluginError{Code: CodeNotFound, Message: "this plugin completes nothing"}))
	}
}

func listTools() []witTools.Tool {
	listed, err := Tools()
	if err != nil {
		// Listing happens when the plugin loads: failing it there shows the author the reason.
		fmt.Fprintln(os.Stderr, err)
		panic(err)
	}
	out := make([]witTools.Tool, 0, len(listed))
	for _, info := range listed {
		out = append(out, witTools.Tool{
			Name:         info.Name,
			Title:        optional(info.Title),
			Description:  optional(info.Description),
			InputSchema:  info.InputSchema,
			OutputSchema: optional(info.OutputSchema),
			Annotations:  annotations(info),
			TaskSupport:  witTools.TaskSupport(info.TaskSupport),
			Meta:         witTypes.None[string](),
		})
	}
	return out
}

func annotations(info ToolInfo) witTypes.Option[witTools.ToolAnnotations] {
	hint := func(set bool) witTypes.Option[bool] {
		if set {
			return witTypes.Some(true)
		}
		return witTypes.None[bool]()
	}
	pointer := func(value *bool) witTypes.Option[bool] {
		if value == nil {
			return witTypes.None[bool]()
		}
		return witTypes.Some(*value)
	}
	if !info.ReadOnly && !info.Idempotent && info.Destructive == nil && info.OpenWorld == nil {
		return witTypes.None[witTools.ToolAnnotations]()
	}
	return witTypes.Some(witTools.ToolAnnotations{
		Title:           witTypes.None[string](),
		ReadOnlyHint:    hint(info.ReadOnly),
		DestructiveHint: pointer(info.Destructive),
		IdempotentHint:  hint(info.Idempotent),
		OpenWorldHint:   pointer(info.OpenWorld),
	})
}

func callTool(name string, arguments string) witTypes.Result[witTools.CallResult, types.PluginError] {
	// The bindings' strings point into memory they free after the call: keep copies only.
	result, err := CallTool(string([]byte(name)), string([]byte(arguments)))
	if err != nil {
		pluginError, ok := err.(*PluginError)
		if !ok {
			pluginError = &PluginError{Code: CodeInternal, Message: err.Error()}
		}
		return witTypes.Err[witTools.CallResult](toWitError(pluginError))
	}
	content := make([]types.ContentBlock, 0, len(result.Content))
	for _, block := range result.Content {
		content = append(content, toWitContent(block))
	}
	structured := witTypes.None[string]()
	if result.Structured != nil {
		structured = witTypes.Some(string(result.Structured))
	}
	return witTypes.Ok[witTools.CallResult, types.PluginError](witTools.CallResult{
		Content:           content,
		StructuredContent: structured,
		IsError:           result.IsError,
		Meta:              witTypes.None[string](),
	})
}

func toWitContent(block Content) types.ContentBlock {
	switch block.Kind {
	case "image", "audio":
		media := types.MediaContent{
			Data:        block.Data,
			MimeType:    block.MimeType,
			Annotations: witTypes.None[types.Annotations](),
			Meta:        witTypes.None[string](),
		}
		if block.Kind == "image" {
			return types.MakeContentBlockImage(media)
		}
		return types.MakeContentBlockAudio(media)
	}
	return types.MakeContentBlockText(types.TextContent{
		Text:        block.Text,
		Annotations: witTypes.None[types.Annotations](),
		Meta:        witTypes.None[string](),
	})
}

func toWitError(err *PluginError) types.PluginError {
	return types.PluginError{Code: types.ErrorCode(err.Code), Message: err.Message, Data: witTypes.None[string]()}
}

func optional(text string) witTypes.Option[string] {
	if text == "" {
		return witTypes.None[string]()
	}
	return witTypes.Some(text)
}

// Package palisade writes MCP tools in Go, for Palisade: each tool is a Go function, its
// arguments and result Go types whose JSON Schemas the SDK derives, and the plugin a
// WebAssembly component the host runs sandboxed, a fresh instance per call.
//
//	func init() {
//		palisade.Tool("greet", "Say hello to someone", func(in Greet) (string, error) {
//			return "Hello, " + in.Name + "!", nil
//		}, palisade.ReadOnly())
//	}
//
//	func main() {}
//
// Build with GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared, then palisade componentize
// (build.sh does both; see the README).
package palisade

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
)

// Version is the SDK's version, which is the Palisade contract's it builds against.
const Version = "0.2.0"

// TaskSupport says whether a tool's calls may run as MCP tasks (docs/tasks.md).
type TaskSupport uint8

const (
	// TaskForbidden: every call answers on its request (the default).
	TaskForbidden TaskSupport = iota
	// TaskOptional: a task whenever the client allows one.
	TaskOptional
	// TaskRequired: only as a task.
	TaskRequired
)

// ToolInfo is a tool as it is listed.
type ToolInfo struct {
	Name         string
	Title        string
	Description  string
	InputSchema  string
	OutputSchema string
	ReadOnly     bool
	Destructive  *bool
	Idempotent   bool
	OpenWorld    *bool
	TaskSupport  TaskSupport
}

// ToolOption changes a tool's listing.
type ToolOption func(*ToolInfo)

// Title is a name for people.
func Title(title string) ToolOption { return func(t *ToolInfo) { t.Title = title } }

// ReadOnly hints that the tool changes nothing.
func ReadOnly() ToolOption { return func(t *ToolInfo) { t.ReadOnly = true } }

// Destructive hints whether the tool may destroy data.
func Destructive(destructive bool) ToolOption {
	return func(t *ToolInfo) { t.Destructive = &destructive }
}

// Idempotent hints that calling it twice has no further effect.
func Idempotent() ToolOption { return func(t *ToolInfo) { t.Idempotent = true } }

// OpenWorld hints whether the tool talks to the outside world.
func OpenWorld(open bool) ToolOption { return func(t *ToolInfo) { t.OpenWorld = &open } }

// Tasks says whether its calls may run as tasks.
func Tasks(support TaskSupport) ToolOption { return func(t *ToolInfo) { t.TaskSupport = support } }

type tool struct {
	info ToolInfo
	call func(arguments []byte) (*Result, error)
}

var (
	tools         = map[string]*tool{}
	toolOrder     []string
	registerError error
	toolName      = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// Tool registers a tool. Call it from an init function. `run` gets the arguments decoded into
// In (already checked against In's schema by the host) and returns:
//   - a string: the result is that text;
//   - a *Result: the result as built;
//   - any other type: its JSON is the text of the result and, when Out is a struct (or a map),
//     the structured result too, with Out's schema as the tool's output schema.
//
// An error returned is a failed call the model reads (isError), with the error's text. A
// registration that is wrong (a bad name, a duplicate, a type JSON cannot say) makes the
// plugin fail to load, with the reason.
func Tool[In any, Out any](name, description string, run func(In) (Out, error), options ...ToolOption) {
	info := ToolInfo{Name: name, Description: description}
	for _, option := range options {
		option(&info)
	}
	if err := addTool(&info, reflect.TypeFor[In](), reflect.TypeFor[Out](), func(arguments []byte) (*Result, error) {
		var in In
		if err := json.Unmarshal(arguments, &in); err != nil {
			return nil, &PluginError{Code: CodeInvalidParams, Message: "the arguments do not fit: " + err.Error()}
		}
		out, err := run(in)
		if err != nil {
			var pluginError *PluginError
			if errors.As(err, &pluginError) {
				return nil, pluginError
			}
			return ErrorResult(err.Error()), nil
		}
		return toResult(out)
	}); err != nil && registerError == nil {
		registerError = fmt.Errorf("palisade.Tool(%q): %w", name, err)
	}
}

var (
	resultType = reflect.TypeFor[*Result]()
	stringType = reflect.TypeFor[string]()
)

func addTool(info *ToolInfo, in, out reflect.Type, call func([]byte) (*Result, error)) error {
	if !toolName.MatchString(info.Name) {
		return errors.New("a tool's name is 1 to 64 characters of A-Z a-z 0-9 _ -")
	}
	if _, taken := tools[info.Name]; taken {
		return errors.New("registered twice")
	}
	input, err := SchemaOf(in)
	if err != nil {
		return fmt.Errorf("its arguments: %w", err)
	}
	if input["type"] != "object" {
		return fmt.Errorf("its arguments must be a struct (or a map), not %s", in)
	}
	text, err := json.Marshal(input)
	if err != nil {
		return err
	}
	info.InputSchema = string(text)
	if out != resultType && out != stringType {
		output, err := SchemaOf(out)
		if err != nil {
			return fmt.Errorf("its result: %w", err)
		}
		if output["type"] == "object" {
			text, err := json.Marshal(output)
			if err != nil {
				return err
			}
			info.OutputSchema = string(text)
		}
	}
	tools[info.Name] = &tool{info: *info, call: call}
	toolOrder = append(toolOrder, info.Name)
	return nil
}

func toResult(out any) (*Result, error) {
	switch value := out.(type) {
	case string:
		return TextResult(value), nil
	case *Result:
		if value == nil {
			return &Result{}, nil
		}
		return value, nil
	}
	text, err := json.Marshal(out)
	if err != nil {
		return nil, &PluginError{Code: CodeInternal, Message: "the result is not JSON: " + err.Error()}
	}
	result := &Result{Content: []Content{Text(string(text))}}
	// MCP's structured content is an object; other values (lists, numbers) are text only.
	if len(text) > 0 && text[0] == '{' {
		result.Structured = text
	}
	return result, nil
}

// Tools lists the registered tools, in the order they were registered.
func Tools() ([]ToolInfo, error) {
	if registerError != nil {
		return nil, registerError
	}
	listed := make([]ToolInfo, 0, len(toolOrder))
	for _, name := range toolOrder {
		listed = append(listed, tools[name].info)
	}
	return listed, nil
}

// CallTool runs the tool `name` with JSON arguments, as the host does; for tests of a plugin.
func CallTool(name string, arguments string) (result *Result, err error) {
	found, ok := tools[name]
	if !ok {
		return nil, &PluginError{Code: CodeNotFound, Message: fmt.Sprintf("no tool %q", name)}
	}
	defer failOnPanic("the tool", &err)
	return found.call([]byte(arguments))
}

// ErrorCode says why a call failed as a protocol error (not a tool error the model reads).
type ErrorCode uint8

const (
	// CodeInvalidParams: the arguments are wrong.
	CodeInvalidParams ErrorCode = iota
	// CodeNotFound: no such tool, resource or prompt.
	CodeNotFound
	// CodeInternal: the plugin failed.
	CodeInternal
	// CodeCancelled: the client cancelled the call.
	CodeCancelled
)

// PluginError is a failure of the call itself; return one from a tool to answer with a
// JSON-RPC error instead of a tool result.
type PluginError struct {
	Code    ErrorCode
	Message string
}

func (e *PluginError) Error() string { return e.Message }

// failOnPanic, deferred by what runs the plugin's own code, turns a panic there into an internal
// error that says what panicked. (A panic leaves the results unset: the return never ran.)
func failOnPanic(what string, err *error) {
	if recovered := recover(); recovered != nil {
		*err = &PluginError{Code: CodeInternal, Message: fmt.Sprintf("%s panicked: %v", what, recovered)}
	}
}

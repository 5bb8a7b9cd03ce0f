package palisade

import "encoding/json"

// Result is what a tool call produced: content for the model, optionally a structured value
// matching the tool's output schema, and whether the call failed.
type Result struct {
	Content    []Content
	Structured json.RawMessage
	IsError    bool
}

// Content is one block of a result.
type Content struct {
	// Kind is "text", "image" or "audio".
	Kind     string
	Text     string
	Data     []byte
	MimeType string
}

// Text is a text block.
func Text(text string) Content { return Content{Kind: "text", Text: text} }

// Image is an image block (PNG, JPEG, ...).
func Image(data []byte, mimeType string) Content {
	return Content{Kind: "image", Data: data, MimeType: mimeType}
}

// Audio is an audio block.
func Audio(data []byte, mimeType string) Content {
	return Content{Kind: "audio", Data: data, MimeType: mimeType}
}

// TextResult is a result of one text block.
func TextResult(text string) *Result { return &Result{Content: []Content{Text(text)}} }

// ErrorResult is a failed call with a message for the model.
func ErrorResult(message string) *Result {
	return &Result{Content: []Content{Text(message)}, IsError: true}
}

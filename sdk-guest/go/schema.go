package palisade

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// SchemaOf is the JSON Schema (2020-12) of a Go type, as the SDK derives a tool's input and
// output schemas: a struct is an object whose properties are its exported fields, named by
// their `json` tags; a field is required unless it is a pointer or tagged `omitempty`. The tag
// `description:"..."` describes a field, and `enum:"a,b,c"` lists the values it may take.
func SchemaOf(t reflect.Type) (map[string]any, error) {
	return schemaOf(t, map[reflect.Type]bool{})
}

var (
	rawMessage = reflect.TypeOf(json.RawMessage(nil))
	anyType    = reflect.TypeOf((*any)(nil)).Elem()
)

func schemaOf(t reflect.Type, seen map[reflect.Type]bool) (map[string]any, error) {
	if t == rawMessage || t == anyType {
		return map[string]any{}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem(), seen)
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			// encoding/json writes []byte as base64 text.
			return map[string]any{"type": "string", "contentEncoding": "base64"}, nil
		}
		items, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("%s: a map's keys must be strings to be JSON", t)
		}
		values, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Struct:
		return structSchema(t, seen)
	}
	return nil, fmt.Errorf("%s: a %s cannot be said in JSON", t, t.Kind())
}

func structSchema(t reflect.Type, seen map[reflect.Type]bool) (map[string]any, error) {
	if seen[t] {
		return nil, fmt.Errorf("%s refers to itself, which a tool's schema cannot say", t)
	}
	seen[t] = true
	defer delete(seen, t)
	properties := map[string]any{}
	required := []string{}
	for i := 0; i < t.NumField(); i++ {
		field := t.Field(i)
		if !field.IsExported() {
			continue
		}
		name, options, _ := strings.Cut(field.Tag.Get("json"), ",")
		if name == "-" && options == "" {
			continue
		}
		if field.Anonymous && name == "" && field.Type.Kind() == reflect.Struct {
			embedded, err := structSchema(field.Type, seen)
			if err != nil {
				return nil, err
			}
			for key, value := range embedded["properties"].(map[string]any) {
				properties[key] = value
			}
			if more, ok := embedded["required"].([]string); ok {
				required = append(required, more...)
			}
			continue
		}
		if name == "" {
			name = field.Name
		}
		schema, err := schemaOf(field.Type, seen)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", field.Name, err)
		}
		if description := field.Tag.Get("description"); description != "" {
			schema["description"] = description
		}
		if enum := field.Tag.Get("enum"); enum != "" {
			values := []any{}
			for _, value := range strings.Split(enum, ",") {
				values = append(values, strings.TrimSpace(value))
			}
			schema["enum"] = values
		}
		properties[name] = schema
		optional := field.Type.Kind() == reflect.Pointer || strings.Contains(","+options+",", ",omitempty,") ||
			strings.Contains(","+options+",", ",omitzero,")
		if !optional {
			required = append(required, name)
		}
	}
	schema := map[string]any{"type": "object", "properties": properties}
	if len(required) > 0 {
		schema["required"] = required
	}
	return schema, nil
}

package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	palisade "github.com/palisade-mcp/palisade/sdk-guest/go"
)

// A table is a file's rows, each a map from column to value (a number, a boolean, a string
// or nil), and its columns in the order first seen.
type table struct {
	columns []string
	known   map[string]bool
	rows    []map[string]any
}

func (t *table) has(column string) bool { return t.known[column] }

func (t *table) add(row map[string]any, order []string) error {
	if len(t.rows) == maxRowsRead {
		return fmt.Errorf("more than %d rows: query a smaller file", maxRowsRead)
	}
	for _, column := range order {
		if !t.known[column] {
			t.known[column] = true
			t.columns = append(t.columns, column)
		}
	}
	t.rows = append(t.rows, row)
	return nil
}

// maxRowsRead bounds the rows held at once.
const maxRowsRead = 200_000

func load(path string) (*table, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d this tool reads", path, info.Size(), maxFileBytes)
	}
	t := &table{known: map[string]bool{}}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return t, readDelimited(t, file, ',')
	case ".tsv":
		return t, readDelimited(t, file, '\t')
	case ".json":
		return t, readJSONArray(t, file)
	case ".jsonl", ".ndjson":
		return t, readJSONLines(t, file)
	}
	return nil, fmt.Errorf("%s is not a .csv, .tsv, .json or .jsonl file", path)
}

func readDelimited(t *table, r io.Reader, comma rune) error {
	reader := csv.NewReader(r)
	reader.Comma = comma
	reader.FieldsPerRecord = -1
	header, err := reader.Read()
	if err != nil {
		return fmt.Errorf("no header row: %w", err)
	}
	for i, name := range header {
		header[i] = strings.TrimSpace(name)
	}
	for {
		record, err := reader.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		row := map[string]any{}
		for i, name := range header {
			if i < len(record) {
				row[name] = scalar(record[i])
			}
		}
		if err := t.add(row, header); err != nil {
			return err
		}
	}
}

// scalar reads a CSV field as a number or a boolean when it is one.
func scalar(text string) any {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil
	}
	if number, err := strconv.ParseFloat(trimmed, 64); err == nil {
		return number
	}
	if truth, err := strconv.ParseBool(trimmed); err == nil && len(trimmed) > 1 {
		return truth
	}
	return text
}

func addObject(t *table, raw json.RawMessage) error {
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var object map[string]any
	if err := decoder.Decode(&object); err != nil {
		return fmt.Errorf("a row that is not a JSON object: %w", err)
	}
	order, err := keyOrder(raw)
	if err != nil {
		return err
	}
	for key, value := range object {
		if number, ok := value.(json.Number); ok {
			object[key], _ = number.Float64()
		}
	}
	return t.add(object, order)
}

// keyOrder is an object's keys in the order written, so columns read as the file has them.
func keyOrder(raw json.RawMessage) ([]string, error) {
	decoder := json.NewDecoder(bytes.NewReader(raw))
	if _, err := decoder.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for decoder.More() {
		key, err := decoder.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, key.(string))
		var skip json.RawMessage
		if err := decoder.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func readJSONArray(t *table, r io.Reader) error {
	decoder := json.NewDecoder(r)
	start, err := decoder.Token()
	if err != nil || start != json.Delim('[') {
		return fmt.Errorf("the file is not a JSON array of objects")
	}
	for decoder.More() {
		var raw json.RawMessage
		if err := decoder.Decode(&raw); err != nil {
			return err
		}
		if err := addObject(t, raw); err != nil {
			return err
		}
	}
	return nil
}

func readJSONLines(t *table, r io.Reader) error {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; scanner.Scan(); line++ {
		text := bytes.TrimSpace(scanner.Bytes())
		if len(text) == 0 {
			continue
		}
		if err := addObject(t, json.RawMessage(text)); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	return scanner.Err()
}

func columnType(rows []map[string]any, column string) string {
	seen := ""
	for _, row := range rows {
		value, ok := row[column]
		if !ok || value == nil {
			continue
		}
		kind := "string"
		switch value.(type) {
		case float64:
			kind = "number"
		case bool:
			kind = "boolean"
		case map[string]any, []any:
			kind = "json"
		}
		if seen != "" && seen != kind {
			return "mixed"
		}
		seen = kind
	}
	if seen == "" {
		return "empty"
	}
	return seen
}

func meets(value any, condition Condition) (bool, error) {
	text := fmt.Sprint(value)
	if value == nil {
		text = ""
	}
	switch condition.Op {
	case "=":
		return compare(value, scalar(condition.Value)) == 0, nil
	case "!=":
		return compare(value, scalar(condition.Value)) != 0, nil
	case "contains":
		return strings.Contains(strings.ToLower(text), strings.ToLower(condition.Value)), nil
	case "<", "<=", ">", ">=":
		c := compare(value, scalar(condition.Value))
		return map[string]bool{"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[condition.Op], nil
	}
	return false, fmt.Errorf("unknown operator %q: use =, !=, <, <=, >, >= or contains", condition.Op)
}

// compare orders numbers as numbers, everything else as text; nothing (nil) sorts first.
func compare(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	x, xNumber := a.(float64)
	y, yNumber := b.(float64)
	if xNumber && yNumber {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// rowsResult is the rows as structured content and as a Markdown table for the model.
func rowsResult(out Rows) (*palisade.Result, error) {
	structured, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var text strings.Builder
	fmt.Fprintf(&text, "%d of %d matching rows\n\n", len(out.Rows), out.Matched)
	text.WriteString("| " + strings.Join(out.Columns, " | ") + " |\n|")
	text.WriteString(strings.Repeat(" --- |", len(out.Columns)) + "\n")
	for _, row := range out.Rows {
		cells := make([]string, len(out.Columns))
		for i, column := range out.Columns {
			cells[i] = strings.ReplaceAll(cell(row[column]), "|", "\\|")
		}
		text.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return &palisade.Result{Content: []palisade.Content{palisade.Text(text.String())}, Structured: structured}, nil
}

// cell is a value as a person reads it: numbers in full, not in exponent form.
func cell(value any) string {
	switch v := value.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(value)
}

// query (Go): look into the CSV, TSV, JSON and JSON Lines files in the user's folders, the
// client's roots or the directories the configuration grants: find them, see their columns,
// and filter, sort and pick rows, without handing the model whole files.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	palisade "github.com/palisade-mcp/palisade/sdk-guest/go"
)

// Bounds on what one call reads, whatever the folders hold.
const (
	maxFiles     = 500
	maxDepth     = 8
	maxFileBytes = 64 << 20
	maxRows      = 1000
)

type Files struct {
	// Under, when given, narrows the search to one folder.
	Under string `json:"under,omitempty" description:"Only files under this folder (a path from the roots)."`
}

type FileEntry struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

type FileList struct {
	Files     []FileEntry `json:"files"`
	Truncated bool        `json:"truncated"`
}

type Describe struct {
	Path string `json:"path" description:"The file, as files lists it."`
}

type Column struct {
	Name string `json:"name"`
	// Type is "number", "boolean", "string" or "mixed".
	Type string `json:"type"`
}

type Description struct {
	Path    string           `json:"path"`
	Rows    int              `json:"rows"`
	Columns []Column         `json:"columns"`
	Sample  []map[string]any `json:"sample"`
}

type Condition struct {
	Column string `json:"column"`
	Op     string `json:"op" enum:"=,!=,<,<=,>,>=,contains" description:"How to compare; < and > compare numbers as numbers."`
	Value  string `json:"value"`
}

type Query struct {
	Path       string      `json:"path" description:"The file, as files lists it."`
	Columns    []string    `json:"columns,omitempty" description:"The columns to return (all when empty)."`
	Where      []Condition `json:"where,omitempty" description:"Conditions every returned row meets."`
	OrderBy    string      `json:"order_by,omitempty" description:"A column to sort by."`
	Descending bool        `json:"descending,omitempty"`
	Limit      int         `json:"limit,omitempty" description:"At most this many rows (default 20, at most 1000)."`
}

type Rows struct {
	Columns []string         `json:"columns"`
	Rows    []map[string]any `json:"rows"`
	// Matched counts every row that met the conditions, returned or not.
	Matched int `json:"matched"`
}

func init() {
	palisade.Tool("files", "List the CSV, TSV, JSON and JSON Lines files in the user's folders", listFiles, palisade.ReadOnly())
	palisade.Tool("describe", "Show a data file's columns, their types, its row count and a few rows", describe, palisade.ReadOnly())
	palisade.Tool("query", "Filter, sort and pick rows and columns of a data file", query,
		palisade.ReadOnly(), palisade.Title("Query a data file"))
	palisade.Prompt(palisade.PromptInfo{
		Name:        "explore",
		Description: "Explore a data file: what it holds and what stands out",
		Arguments:   []palisade.PromptArgument{{Name: "path", Description: "The file", Required: true}},
	}, func(arguments map[string]string) (*palisade.PromptResult, error) {
		return &palisade.PromptResult{Messages: []palisade.Message{palisade.UserMessage(fmt.Sprintf(
			"Look at the data file %s: describe it with query_describe, then use query_query to find "+
				"the three most notable things in it (extremes, gaps, odd values). Quote the rows.",
			arguments["path"]))}}, nil
	})
	palisade.CompletePromptArgument("explore", "path", func(value string, _ map[string]string) ([]string, error) {
		list, err := listFiles(Files{})
		if err != nil {
			return nil, err
		}
		matches := []string{}
		for _, file := range list.Files {
			if strings.Contains(strings.ToLower(file.Path), strings.ToLower(value)) {
				matches = append(matches, file.Path)
			}
		}
		return matches, nil
	})
}

// folders are where data may be: the client's roots this plugin may use, else the directories
// its configuration grants (seen at /data by convention), else the working directory's.
func folders() []string {
	var out []string
	for _, root := range palisade.Roots() {
		out = append(out, root.Path)
	}
	if len(out) == 0 {
		if _, err := os.Stat("/data"); err == nil {
			out = append(out, "/data")
		}
	}
	return out
}

func isData(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv", ".tsv", ".json", ".jsonl", ".ndjson":
		return true
	}
	return false
}

func listFiles(in Files) (FileList, error) {
	list := FileList{Files: []FileEntry{}}
	bases := folders()
	if in.Under != "" {
		bases = []string{in.Under}
	}
	if len(bases) == 0 {
		return list, fmt.Errorf("no folders to look in: the client shared no roots, and no directory is granted at /data")
	}
	for _, base := range bases {
		depth := strings.Count(filepath.Clean(base), string(filepath.Separator))
		err := filepath.WalkDir(base, func(path string, entry fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable folder is skipped, not fatal
			}
			if entry.IsDir() {
				if strings.HasPrefix(entry.Name(), ".") && path != base || strings.Count(path, string(filepath.Separator))-depth > maxDepth {
					return filepath.SkipDir
				}
				return nil
			}
			if !isData(entry.Name()) {
				return nil
			}
			if len(list.Files) == maxFiles {
				list.Truncated = true
				return filepath.SkipAll
			}
			info, err := entry.Info()
			if err == nil {
				list.Files = append(list.Files, FileEntry{Path: path, Bytes: info.Size()})
			}
			return nil
		})
		if err != nil {
			return list, err
		}
	}
	return list, nil
}

func describe(in Describe) (Description, error) {
	table, err := load(in.Path)
	if err != nil {
		return Description{}, err
	}
	description := Description{Path: in.Path, Rows: len(table.rows), Columns: []Column{}, Sample: []map[string]any{}}
	for _, column := range table.columns {
		description.Columns = append(description.Columns, Column{Name: column, Type: columnType(table.rows, column)})
	}
	for i := 0; i < len(table.rows) && i < 3; i++ {
		description.Sample = append(description.Sample, table.rows[i])
	}
	return description, nil
}

func query(in Query) (*palisade.Result, error) {
	table, err := load(in.Path)
	if err != nil {
		return nil, err
	}
	for _, name := range append(append([]string{}, in.Columns...), in.OrderBy) {
		if name != "" && !table.has(name) {
			return nil, fmt.Errorf("%s has no column %q; its columns: %s", in.Path, name, strings.Join(table.columns, ", "))
		}
	}
	matched := []map[string]any{}
	for _, row := range table.rows {
		keep := true
		for _, condition := range in.Where {
			if !table.has(condition.Column) {
				return nil, fmt.Errorf("%s has no column %q; its columns: %s", in.Path, condition.Column, strings.Join(table.columns, ", "))
			}
			ok, err := meets(row[condition.Column], condition)
			if err != nil {
				return nil, err
			}
			keep = keep && ok
		}
		if keep {
			matched = append(matched, row)
		}
	}
	if in.OrderBy != "" {
		sort.SliceStable(matched, func(i, j int) bool {
			if in.Descending {
				i, j = j, i
			}
			return compare(matched[i][in.OrderBy], matched[j][in.OrderBy]) < 0
		})
	}
	limit := in.Limit
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, maxRows)
	columns := in.Columns
	if len(columns) == 0 {
		columns = table.columns
	}
	out := Rows{Columns: columns, Rows: []map[string]any{}, Matched: len(matched)}
	for i := 0; i < len(matched) && i < limit; i++ {
		picked := map[string]any{}
		for _, column := range columns {
			picked[column] = matched[i][column]
		}
		out.Rows = append(out.Rows, picked)
	}
	return rowsResult(out)
}

// A plugin is a library: the host calls its tools, never main.
func main() {}

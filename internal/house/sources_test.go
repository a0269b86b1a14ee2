package house_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// root is the repository root, seen from this package's directory.
var root = filepath.Join("..", "..")

// maxFileLines is the most lines a hand-written Go file may have: past it, a file holds more than one thing
// and is split by what it holds.
const maxFileLines = 600

// sqlStatement matches the start of a SQL statement in a string: what a handler must call through gen/db or
// a domain package's query builder instead of writing it.
var sqlStatement = regexp.MustCompile(`(?is)\bSELECT\b.+\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\b\s+\w+.*\bSET\b|\bDELETE\s+FROM\b|\bWITH\b\s+\w+\s+AS\b|` +
	`\bCOPY\s+\w+.*\bFROM\s+STDIN\b|\bCREATE\s+(TEMP\s+)?TABLE\b|\bSET\s+(LOCAL|TRANSACTION)\b`)

// TestSQLStatementMatcherFindsStatements pins what the handlers check counts as SQL, so that it cannot pass
// by matching nothing.
func TestSQLStatementMatcherFindsStatements(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"SELECT id FROM contacts WHERE organization_id = $1",
		"select count(*)\n  from send_tasks",
		"INSERT INTO labels (id) VALUES ($1)",
		"UPDATE contacts SET subscribed = false",
		"delete from contacts where id = $1",
		"WITH u AS (SELECT 1) SELECT * FROM u",
		"COPY contact_import_rows (id, email) FROM STDIN (FORMAT binary)",
		"CREATE TEMP TABLE t (id uuid) ON COMMIT DROP",
		"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"SET LOCAL work_mem = '32MB'",
	} {
		require.True(t, sqlStatement.MatchString(s), "%q should count as SQL", s)
	}
	for _, s := range []string{
		"Select contacts with `contacts` (1 to 1000 ids).",
		"Send at most 100 ids; update the rest later.",
		"No contact with that id in this organization.",
		"delete",
	} {
		require.False(t, sqlStatement.MatchString(s), "%q should not count as SQL", s)
	}
}

// TestHandlersHoldNoSQL fails when a non-test Go file in handlers/ holds SQL statement text in a string
// literal: handlers call sqlc queries (queries/*.sql) or domain packages, which own their dynamic SQL.
func TestHandlersHoldNoSQL(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(root, "handlers", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the handlers directory must be found")
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			if sqlStatement.MatchString(s) {
				t.Errorf("%s holds SQL text %q; put it in queries/*.sql or the owning domain package",
					fset.Position(lit.Pos()), clip(s))
			}
			return true
		})
	}
}

// TestGoFilesStayUnder600Lines fails when a Go file outside gen/ (generated) and .data/ (local databases)
// has more than maxFileLines lines.
func TestGoFilesStayUnder600Lines(t *testing.T) {
	t.Parallel()
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch rel, _ := filepath.Rel(root, path); rel {
			case "gen", ".data", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		seen++
		if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
			t.Errorf("%s has %d lines; split it by what it holds (at most %d)", path, n, maxFileLines)
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, seen, 100, "the walk must reach the repository's Go files")
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

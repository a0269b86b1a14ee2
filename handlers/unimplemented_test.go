package handlers

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
)

// TestTheOperationsThatAnswer501AreExactlyTheListedOnes holds testdata/unimplemented.txt to what the handler
// leaves to notYet (ogen's 501): an operation that answers 501 and is not listed fails, and so does a listed one
// that an area now implements, so the list only shrinks as areas ship.
func TestTheOperationsThatAnswer501AreExactlyTheListedOnes(t *testing.T) {
	raw, err := os.ReadFile("testdata/unimplemented.txt")
	require.NoError(t, err)
	var listed []string
	for line := range strings.Lines(string(raw)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			listed = append(listed, line)
		}
	}
	got := unimplemented()
	require.NotEmpty(t, got, "the check reads the operations notYet answers")
	for _, name := range got {
		require.Contains(t, listed, name, "%s answers 501 and is not listed in testdata/unimplemented.txt", name)
	}
	for _, name := range listed {
		require.Contains(t, got, name, "%s is implemented now: take it off testdata/unimplemented.txt", name)
	}
}

// unimplemented lists, sorted, the generated interface's operations that no area of Handler implements: the
// ones its embedded notYet answers.
func unimplemented() []string {
	ops := reflect.TypeFor[api.Handler]()
	h := reflect.TypeFor[Handler]()
	var out []string
	for i := range ops.NumMethod() {
		name := ops.Method(i).Name
		if name == "NewError" {
			continue // Handler's own error mapping, not an operation
		}
		implemented := false
		for j := range h.NumField() {
			f := h.Field(j)
			if !f.Anonymous || f.Type == reflect.TypeFor[notYet]() {
				continue
			}
			if _, ok := f.Type.MethodByName(name); ok {
				implemented = true
				break
			}
		}
		if !implemented {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

package contactfile_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contactfile"
)

// readAll returns every row of a file with its line.
func readAll(t *testing.T, data string) ([][]string, []int, contactfile.Format) {
	t.Helper()
	rows, format, err := contactfile.Open(strings.NewReader(data))
	require.NoError(t, err)
	defer rows.Close()
	var out [][]string
	var lines []int
	for {
		cells, err := rows.Next()
		if errors.Is(err, io.EOF) {
			return out, lines, format
		}
		require.NoError(t, err)
		out = append(out, append([]string(nil), cells...))
		lines = append(lines, rows.Line())
	}
}

func TestOpenCSV(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data string
		rows       [][]string
		lines      []int
	}{
		{"comma", "a,b\nc,d\n", [][]string{{"a", "b"}, {"c", "d"}}, []int{1, 2}},
		{"semicolon wins", "a;b;c,d\n1;2;3\n", [][]string{{"a", "b", "c,d"}, {"1", "2", "3"}}, []int{1, 2}},
		{"tab", "a\tb\n", [][]string{{"a", "b"}}, []int{1}},
		{"quoted delimiters do not count", "\"x;y;z\",b\n", [][]string{{"x;y;z", "b"}}, []int{1}},
		{"BOM", "\xEF\xBB\xBFemail\nx\n", [][]string{{"email"}, {"x"}}, []int{1, 2}},
		{"blank rows skipped, lines kept", "a\n,,\n\n \nb\n", [][]string{{"a"}, {"b"}}, []int{1, 5}},
		{"a quoted cell spans lines", "\"multi\nline\",x\ny,z\n", [][]string{{"multi\nline", "x"}, {"y", "z"}}, []int{1, 3}},
		{"stray quotes", "ab\"c,d\n", [][]string{{"ab\"c", "d"}}, []int{1}},
		{"Windows-1252", "caf\xe9,\x80\n", [][]string{{"café", "€"}}, []int{1}},
		{"invalid UTF-8 after the start", "a\n" + strings.Repeat("x", 70_000) + "\n\xff\n", nil, nil},
	} {
		rows, lines, format := readAll(t, tc.data)
		require.Equal(t, contactfile.CSV, format, tc.name)
		if tc.rows == nil {
			require.Equal(t, "\uFFFD", rows[2][0], "%s: replaced, never handed to Postgres", tc.name)
			continue
		}
		require.Equal(t, tc.rows, rows, tc.name)
		require.Equal(t, tc.lines, lines, tc.name)
	}

	_, _, err := contactfile.Open(strings.NewReader("a\x00b"))
	require.ErrorIs(t, err, contactfile.ErrUnreadable)
	_, _, err = contactfile.Open(strings.NewReader("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1"))
	require.ErrorIs(t, err, contactfile.ErrUnsupported)
	_, _, err = contactfile.Open(strings.NewReader("PK\x03\x04"))
	require.ErrorIs(t, err, contactfile.ErrUnreadable)
}

func TestDetectHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		first, second []string
		header        bool
	}{
		{[]string{"Email", "Name"}, []string{"ada@example.com", "Ada"}, true},
		{[]string{"Contact", "Who"}, []string{"ada@example.com", "Ada"}, true},
		{[]string{"ada@example.com", "Ada"}, []string{"bob@example.com", "Bob"}, false},
		{[]string{"Work E-mail"}, nil, true},
		{[]string{"Ada", "Lovelace"}, []string{"Bob", "Builder"}, false},
	} {
		require.Equal(t, tc.header, contactfile.DetectHeader(tc.first, tc.second), "%v / %v", tc.first, tc.second)
	}
}

func TestCustomKeyFrom(t *testing.T) {
	t.Parallel()
	taken := map[string]bool{"plan": true, "plan 2": true}
	for name, want := range map[string]string{
		"Job Title":             "Job Title",
		"  Revenue ($)  ":       "Revenue",
		"lead_score-v2":         "lead_score-v2",
		"$$$":                   "",
		"État":                  "tat",
		"Plan":                  "Plan 3",
		strings.Repeat("k", 80): strings.Repeat("k", 64),
	} {
		got := contactfile.CustomKeyFrom(name, taken)
		require.Equal(t, want, got, name)
	}
}

func TestParseSubscribed(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{"Yes": true, "TRUE": true, "1": true, "subscribed": true, "opted-in": true,
		"no": false, "False": false, "0": false, "Unsubscribed": false, "opt out": false} {
		got, known := contactfile.ParseSubscribed(v)
		require.True(t, known, v)
		require.Equal(t, want, got, v)
	}
	_, known := contactfile.ParseSubscribed("maybe")
	require.False(t, known)
}

func TestQualityBadShare(t *testing.T) {
	t.Parallel()
	pct, flagged := contactfile.Quality{Malformed: 1, Disposable: 2, Role: 9}.BadShare(9)
	require.InDelta(t, 33.33, pct, 0.001)
	require.False(t, flagged, "fewer than 20 rows")
	pct, flagged = contactfile.Quality{Malformed: 5, Disposable: 1}.BadShare(20)
	require.Equal(t, 30.0, pct)
	require.True(t, flagged)
	pct, flagged = contactfile.Quality{}.BadShare(0)
	require.Zero(t, pct)
	require.False(t, flagged)
}

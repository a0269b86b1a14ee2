package template_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/template"
)

func TestSpintaxIsTheSameForTheSameSeed(t *testing.T) {
	t.Parallel()
	m, err := template.ParseMessage("{Quick|Short} question", "{Hi|Hello|Hey} {{.FirstName}}, {one|two|three|four}", "")
	require.NoError(t, err)
	contact, step := [16]byte{1, 2, 3}, [16]byte{9}
	first := m.Render(ada(), template.Options{Seed: template.Seed(contact, step)})
	for range 20 {
		again := m.Render(ada(), template.Options{Seed: template.Seed(contact, step)})
		require.Equal(t, first, again, "a retry or a re-render of the same contact and step gives the same text")
	}
	other := map[string]bool{}
	for i := range 50 {
		r := m.Render(ada(), template.Options{Seed: template.Seed(contact, [16]byte{byte(i)})})
		other[r.Plain] = true
	}
	require.Greater(t, len(other), 5, "other steps pick other options")
}

func TestSpintaxSpreadsEvenlyAcrossSeeds(t *testing.T) {
	t.Parallel()
	tm, err := template.Parse("{a|b|c}{x|y}")
	require.NoError(t, err)
	m := &template.Message{Plain: tm}
	const n = 30_000
	counts := map[string]int{}
	pairs := map[string]int{}
	for seed := range uint64(n) {
		r := m.Render(nil, template.Options{Seed: seed})
		counts[r.Plain[:1]]++
		counts[r.Plain[1:]]++
		pairs[r.Plain]++
	}
	for _, opt := range []string{"a", "b", "c"} {
		require.InDelta(t, n/3, counts[opt], n/3*0.05, "option %q of three", opt)
	}
	for _, opt := range []string{"x", "y"} {
		require.InDelta(t, n/2, counts[opt], n/2*0.05, "option %q of two", opt)
	}
	require.Len(t, pairs, 6, "two groups choose independently")
	for pair, c := range pairs {
		require.InDelta(t, n/6, c, n/6*0.08, "pair %q", pair)
	}
}

func TestSpintaxRendersNestedGroupsVariablesAndLiteralBraces(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      []string // every text the template can render
	}{
		{"a group picks one option", "{Hi|Hello}!", []string{"Hi!", "Hello!"}},
		{"groups nest", "{Hi|{Hello|Hey} there}", []string{"Hi", "Hello there", "Hey there"}},
		{"options hold variables", "{Hi {{.FirstName}}|Hello {{.Custom.industry}} fan}",
			[]string{"Hi Ada", "Hello Computing fan"}},
		{"an option may be empty", "Hi{ there|}.", []string{"Hi there.", "Hi."}},
		{"a brace without a pipe is literal text", "a { b } {c}", []string{"a { b } {c}"}},
		{"CSS survives", "<style>p{color:red} a{x:y}</style>", []string{"<style>p{color:red} a{x:y}</style>"}},
		{"JSON survives", `{"a": {"b": 1}}`, []string{`{"a": {"b": 1}}`}},
		{"a lone brace and a stray close are literal", "{ and } and |", []string{"{ and } and |"}},
		{"a group inside literal braces still spins", "{ {x|y} }", []string{"{ x }", "{ y }"}},
		{"a brace before a variable is literal", "{{{.FirstName}}}", []string{"{Ada}"}},
		{"a group may start with a variable", "{{{.FirstName}}|you}", []string{"Ada", "you"}},
		{"a pipe inside a fallback does not split options", `{A {{.Company | default "x|y"}}|B}`,
			[]string{"A Analytical Engines", "B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tm, err := template.Parse(tc.src)
			require.NoError(t, err)
			m := &template.Message{Plain: tm}
			seen := map[string]bool{}
			for seed := range uint64(200) {
				r := m.Render(ada(), template.Options{Seed: seed})
				require.Contains(t, tc.want, r.Plain)
				seen[r.Plain] = true
			}
			require.Len(t, seen, len(tc.want), "every option is picked for some seed")
		})
	}
}

func TestSpintaxPicksTheSameOptionsInParallelPlainAndHTMLBodies(t *testing.T) {
	t.Parallel()
	m, err := template.ParseMessage("", "{Hi|Hello|Hey} {there|friend}", "<p>{Hi|Hello|Hey} {there|friend}</p>")
	require.NoError(t, err)
	for seed := range uint64(100) {
		r := m.Render(ada(), template.Options{Seed: seed})
		require.Equal(t, "<p>"+r.Plain+"</p>", r.HTML)
	}
}

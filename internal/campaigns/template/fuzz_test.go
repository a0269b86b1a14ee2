package template

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzData has values that are URLs, HTML and blanks, so rendering meets every path.
var fuzzData = &Data{
	Contact: Contact{FirstName: "Ada", LastName: " ", Email: "a@b.test", Company: `<b>"A&B"</b>`, Phone: "http:",
		Custom: map[string]string{"site": "https://ada.test/x?y=1", "scheme": "https", "path": "//p.test"}},
	Sender:   Sender{Name: "Grace Hopper", SignatureHTML: `<a href="https://g.test">g</a>`, SignaturePlain: "g https://g.test"},
	Campaign: Campaign{Name: "C"},
	App:      map[string]any{"o": map[string]any{"u": "https://app.test", "n": 1.5}},
}

// FuzzParse checks that no input makes Parse or Render panic, that a rendered subject never holds a line
// break, and that finding links at parse time gives exactly what finding them in the rendered body does.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "plain text", "{{.FirstName}}", `{{.FirstName | default "there"}}`, "{Hi|Hello|{Hey|Yo}}",
		"{{.Custom.site}} https://a.test/x. {{.scheme}}://b.test {{.Phone}}//c.test",
		`<a href="https://a.test/?x=1&amp;y=2#f">a</a><a title="{{.FirstName}}" href="https://{{.Custom.path}}">b</a>`,
		"<!-- <a href='https://c.test'> {{.Email}} --> {{.Signature}}", "{ {{{.Email}}|x} }", "{{.App.o.u}}/more",
		"https://a.test{x|y}z {https://b.test|c} <a href=https://d.test{{.FirstName}}>", "line\r\nbreak{\n|\r}",
		`<a href="https://x.test" title="{{.FirstName}}" data-x="<a href='https://y.test'>">x</a>`,
		`<a href="mailto:{{.Email}}" {{.FirstName}}>m</a> <a title='{{.Email}}' href="https://z.test">z</a>`,
		"{{\"}}", "{{.A | default \"}}\"}}", "{a|b", "héllo {{.X", "<a", "<a href=\"https://x.test",
	} {
		f.Add(seed, uint64(7))
	}
	f.Fuzz(func(t *testing.T, src string, seed uint64) {
		tm, err := Parse(src)
		if err != nil {
			require.True(t, strings.Contains(err.Error(), " at line ") || strings.Contains(err.Error(), "at most"),
				"an error names a position or a limit: %v", err)
			return
		}
		static := &Message{Subject: tm, Plain: tm, HTML: tm}
		forced := *tm
		forced.dynamic = [modes]bool{true, true}
		dynamic := &Message{Subject: &forced, Plain: &forced, HTML: &forced}

		for _, utm := range []*UTM{nil, NewUTM("", "", "", "C")} {
			var calls [2][]string
			render := func(m *Message, i int) Rendered {
				return m.Render(fuzzData, Options{Seed: seed, UTM: utm, Links: func(n int, u string) string {
					calls[i] = append(calls[i], fmt.Sprintf("%d %s", n, u))
					return fmt.Sprintf("https://t.test/%d", n)
				}})
			}
			got, want := render(static, 0), render(dynamic, 1)
			require.Equal(t, want, got, "links found at parse time agree with links found after rendering")
			require.Equal(t, calls[1], calls[0])
			require.NotContains(t, got.Subject, "\n")
			require.NotContains(t, got.Subject, "\r")
			require.NotPanics(t, func() { static.Render(nil, Options{Seed: seed, UTM: utm}) })
		}
	})
}

package template_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/template"
)

// utm is the tagging of the "Spring Launch" campaign with every default.
var utm = template.NewUTM("", "", "", "Spring Launch")

// tags is what utm adds for link number n (from 1).
func tags(n int) string {
	return fmt.Sprintf("utm_source=outflow&utm_medium=email&utm_campaign=spring-launch&utm_content=link-%d", n)
}

func TestUTMTaggingAddsWhatALinkLacksAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
	}{
		{"a bare link gets every parameter", "https://a.test/x", "https://a.test/x?" + tags(1)},
		{"an existing query is extended", "https://a.test/x?id=7", "https://a.test/x?id=7&" + tags(1)},
		{"a trailing & needs no separator", "https://a.test/?id=1&", "https://a.test/?id=1&" + tags(1)},
		{"the fragment stays at the end", "https://a.test/x?id=7#top", "https://a.test/x?id=7&" + tags(1) + "#top"},
		{"existing utm values are kept and not duplicated",
			"https://a.test/?utm_source=news&UTM_CONTENT=hero",
			"https://a.test/?utm_source=news&UTM_CONTENT=hero&utm_medium=email&utm_campaign=spring-launch"},
		{"a fully tagged link is left as it is",
			"http://a.test/?utm_source=a&utm_medium=b&utm_campaign=c&utm_content=d",
			"http://a.test/?utm_source=a&utm_medium=b&utm_campaign=c&utm_content=d"},
		{"each link gets its own utm_content in document order", "https://a.test/1 and HTTPS://b.test/2",
			"https://a.test/1?" + tags(1) + " and HTTPS://b.test/2?" + tags(2)},
		{"sentence punctuation after a link stays outside it", "See https://a.test/x. Or (https://b.test/y)!",
			"See https://a.test/x?" + tags(1) + ". Or (https://b.test/y?" + tags(2) + ")!"},
		{"a bracket the URL opened stays in it", "See https://en.test/wiki/Go_(language).",
			"See https://en.test/wiki/Go_(language)?" + tags(1) + "."},
		{"mailto, tel and non-web text are left alone", "mail mailto:a@b.test or tel:+1 or ftp://x.test or xhttp://y.test",
			"mail mailto:a@b.test or tel:+1 or ftp://x.test or xhttp://y.test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := plain(t, tc.src, ada(), template.Options{UTM: utm})
			require.Equal(t, tc.want, r.Plain)
		})
	}
}

func TestUTMTaggingTreatsHrefsOfAnchorTagsInHTML(t *testing.T) {
	t.Parallel()
	src := `<a class="btn" href="https://a.test/?x=1&amp;y=2#f">Go</a> https://bare.test ` +
		`<A HREF='http://b.test'>B</A> <a href=https://c.test/p>C</a> <a href="mailto:x@y.test">m</a> ` +
		`<a href="#top">t</a> <a href="/relative">r</a> <!-- <a href="https://hidden.test">h</a> --> <abbr href="https://no.test">`
	r := htmlBody(t, src, ada(), template.Options{UTM: utm})
	amp := func(n int) string { return strings.ReplaceAll(tags(n), "&", "&amp;") }
	require.Equal(t, `<a class="btn" href="https://a.test/?x=1&amp;y=2&amp;`+amp(1)+`#f">Go</a> https://bare.test `+
		`<A HREF='http://b.test?`+amp(2)+`'>B</A> <a href=https://c.test/p?`+amp(3)+`>C</a> <a href="mailto:x@y.test">m</a> `+
		`<a href="#top">t</a> <a href="/relative">r</a> <!-- <a href="https://hidden.test">h</a> --> <abbr href="https://no.test">`, r.HTML)
	require.Equal(t, []template.Link{
		{Index: 0, URL: "https://a.test/?x=1&y=2&" + tags(1) + "#f"},
		{Index: 1, URL: "http://b.test?" + tags(2)},
		{Index: 2, URL: "https://c.test/p?" + tags(3)},
	}, r.Links, "links carry the real URL, entities decoded")
}

func TestUTMValuesDefaultAndAreEscaped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                          string
		source, medium, campaign, nam string
		want                          string
	}{
		{"empty values take the defaults", "", "", "", "Q3: Big  Push!", "utm_source=outflow&utm_medium=email&utm_campaign=q3-big-push"},
		{"set values are used and escaped", "news letter", "e&mail", "c=1", "ignored",
			"utm_source=news+letter&utm_medium=e%26mail&utm_campaign=c%3D1"},
		{"a name without letters or digits slugs to campaign", "", "", "", "¡¿!", "utm_source=outflow&utm_medium=email&utm_campaign=campaign"},
		{"the slug keeps only ASCII letters and digits", "", "", "", "Café Über 2025", "utm_source=outflow&utm_medium=email&utm_campaign=caf-ber-2025"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := plain(t, "https://a.test", ada(), template.Options{UTM: template.NewUTM(tc.source, tc.medium, tc.campaign, tc.nam)})
			require.Equal(t, "https://a.test?"+tc.want+"&utm_content=link-1", r.Plain)
		})
	}
}

func TestCheckUTMSourceAllowsUpTo128Characters(t *testing.T) {
	t.Parallel()
	require.NoError(t, template.CheckUTMSource(strings.Repeat("é", 128)))
	require.ErrorContains(t, template.CheckUTMSource(strings.Repeat("a", 129)), "utm_source must be at most 128 characters; it has 129.")
}

func TestTrackingRewritesEachLinkWithItsOwnNumber(t *testing.T) {
	t.Parallel()
	m, err := template.ParseMessage("Visit https://subject.test",
		"Read https://a.test/post and https://b.test, or https://a.test/post again: https://new.test",
		`<p><a href="https://a.test/post">post</a> <a href="https://b.test">b</a> <a href="https://a.test/post">again</a></p>`)
	require.NoError(t, err)
	var calls []string
	r := m.Render(ada(), template.Options{UTM: utm, Links: func(i int, u string) string {
		calls = append(calls, fmt.Sprintf("%d %s", i, u))
		return fmt.Sprintf("https://t.test/c/%d?a=1&b=2", i)
	}})
	require.Equal(t, []string{
		"0 https://a.test/post?" + tags(1),
		"1 https://b.test?" + tags(2),
		"2 https://a.test/post?" + tags(3),
		"3 https://new.test?" + tags(4),
	}, calls, "the rewriter gets each number once with the tagged URL; the plain body reuses the HTML body's numbers")
	require.Equal(t, `<p><a href="https://t.test/c/0?a=1&amp;b=2">post</a> <a href="https://t.test/c/1?a=1&amp;b=2">b</a> `+
		`<a href="https://t.test/c/2?a=1&amp;b=2">again</a></p>`, r.HTML, "a rewritten link is escaped in HTML")
	require.Equal(t, "Read https://t.test/c/0?a=1&b=2 and https://t.test/c/1?a=1&b=2, or https://t.test/c/2?a=1&b=2 again: "+
		"https://t.test/c/3?a=1&b=2", r.Plain)
	require.Equal(t, "Visit https://subject.test", r.Subject, "subjects hold no links")
	require.Len(t, r.Links, 4)
	require.Equal(t, template.Link{Index: 3, URL: "https://new.test?" + tags(4)}, r.Links[3])
}

func TestLinksBuiltByVariablesAndSpintaxAreFoundAfterRendering(t *testing.T) {
	t.Parallel()
	d := ada()
	d.Contact.Custom["site"] = "https://ada.test/home"
	d.Contact.Custom["host"] = "ada.test"
	for _, tc := range []struct {
		name, plain, html, wantPlain, wantHTML string
	}{
		{"a variable inside a URL", "https://a.test/?e={{.Email}}", `<a href="https://a.test/?e={{.Email}}">x</a>`,
			"https://a.test/?e=ada@example.com&" + tags(1), `<a href="https://a.test/?e=ada@example.com&amp;` + strings.ReplaceAll(tags(1), "&", "&amp;") + `">x</a>`},
		{"a variable as the host", "https://{{.Custom.host}}/x", `<a title="{{.FirstName}}" href="https://{{.Custom.host}}/x">x</a>`,
			"https://ada.test/x?" + tags(1), `<a title="Ada" href="https://ada.test/x?` + strings.ReplaceAll(tags(1), "&", "&amp;") + `">x</a>`},
		{"a URL that is a whole value", "Site: {{.Custom.site}}", `<a href="{{.Custom.site}}">site</a>`,
			"Site: https://ada.test/home?" + tags(1), `<a href="https://ada.test/home?` + strings.ReplaceAll(tags(1), "&", "&amp;") + `">site</a>`},
		{"a variable in the tag after the href", "https://a.test/x", `<a href="https://a.test/x" title="{{.FirstName}}">x</a>`,
			"https://a.test/x?" + tags(1), `<a href="https://a.test/x?` + strings.ReplaceAll(tags(1), "&", "&amp;") + `" title="Ada">x</a>`},
		{"a mailto link built by a variable is left alone", "{{.Email}}: https://a.test/x",
			`<a href="mailto:{{.Email}}">{{.Email}}</a>: <a href="https://a.test/x">x</a>`,
			"ada@example.com: https://a.test/x?" + tags(1),
			`<a href="mailto:ada@example.com">ada@example.com</a>: <a href="https://a.test/x?` + strings.ReplaceAll(tags(1), "&", "&amp;") + `">x</a>`},
		{"a scheme from spintax", "{http|http}s://a.test", `<a href="{https|https}://a.test">a</a>`,
			"https://a.test?" + tags(1), `<a href="https://a.test?` + strings.ReplaceAll(tags(1), "&", "&amp;") + `">a</a>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := template.ParseMessage("", tc.plain, tc.html)
			require.NoError(t, err)
			r := m.Render(d, template.Options{UTM: utm})
			require.Equal(t, tc.wantPlain, r.Plain)
			require.Equal(t, tc.wantHTML, r.HTML)
			require.Len(t, r.Links, 1, "the plain link matches the HTML link")
		})
	}
}

func TestPlainLinksShareNumbersWithHTMLLinksInBodiesWithManyLinks(t *testing.T) {
	t.Parallel()
	var h, p strings.Builder
	for i := range 100 {
		fmt.Fprintf(&h, `<a href="https://a.test/%d">x</a>`, i%50)
		fmt.Fprintf(&p, "https://a.test/%d\n", (99-i)%50)
	}
	fmt.Fprintf(&p, "https://new.test\n")
	m, err := template.ParseMessage("", p.String(), h.String())
	require.NoError(t, err)
	r := m.Render(ada(), template.Options{})
	require.Len(t, r.Links, 101, "one number per HTML link, and one for the plain-only link")
	var got []int
	r2 := m.Render(ada(), template.Options{Links: func(i int, u string) string {
		got = append(got, i)
		return fmt.Sprint(i)
	}})
	require.Len(t, got, 101)
	lines := strings.Split(strings.TrimSpace(r2.Plain), "\n")
	require.Equal(t, "49", lines[0], "a.test/49 first matches the HTML link numbered 49")
	require.Equal(t, "99", lines[50], "its second occurrence matches the next untaken one, numbered 99")
	require.Equal(t, "100", lines[100])
}

func TestLinksAreListedEvenWithoutTaggingOrTracking(t *testing.T) {
	t.Parallel()
	r := htmlBody(t, `<a href="https://a.test/?x=1&amp;y=2">a</a>`, ada(), template.Options{})
	require.Equal(t, `<a href="https://a.test/?x=1&amp;y=2">a</a>`, r.HTML, "an untreated link is left as written")
	require.Equal(t, []template.Link{{Index: 0, URL: "https://a.test/?x=1&y=2"}}, r.Links)
}

func TestTheHTMLSignaturesLinksAreTreatedLikeTheBodys(t *testing.T) {
	t.Parallel()
	d := ada()
	d.Sender.SignatureHTML = `<a href="https://grace.test">Grace</a>`
	r := htmlBody(t, `<a href="https://a.test">a</a> {{.Signature}}`, d, template.Options{UTM: utm})
	require.Equal(t, `<a href="https://a.test?`+strings.ReplaceAll(tags(1), "&", "&amp;")+`">a</a> `+
		`<a href="https://grace.test?`+strings.ReplaceAll(tags(2), "&", "&amp;")+`">Grace</a>`, r.HTML)
}

package template_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/template"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// ada is the contact most tests render for.
func ada() *template.Data {
	return &template.Data{
		Contact: template.Contact{
			FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Company: "Analytical Engines",
			Phone:  "+44 20 7946 0000",
			Custom: map[string]string{"industry": "Computing", "Lead Source": "conference", "empty": "  "},
		},
		Sender: template.Sender{Name: "Grace Hopper", Email: "grace@outflow.test",
			SignatureHTML: "<p>Grace &amp; team</p>", SignaturePlain: "Grace\nOutflow"},
		Campaign: template.Campaign{Name: "Spring Launch"},
	}
}

// plain renders src as a plain body.
func plain(t *testing.T, src string, d *template.Data, o template.Options) template.Rendered {
	t.Helper()
	m, err := template.ParseMessage("", src, "")
	require.NoError(t, err)
	return m.Render(d, o)
}

// htmlBody renders src as an HTML body.
func htmlBody(t *testing.T, src string, d *template.Data, o template.Options) template.Rendered {
	t.Helper()
	m, err := template.ParseMessage("", "", src)
	require.NoError(t, err)
	return m.Render(d, o)
}

func TestVariablesRenderContactSenderAndCampaignFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
	}{
		{"standard fields print as stored", "{{.FirstName}} {{.LastName}} <{{.Email}}> of {{.Company}}, {{.Phone}}",
			"Ada Lovelace <ada@example.com> of Analytical Engines, +44 20 7946 0000"},
		{"full name joins first and last", "{{.FullName}}", "Ada Lovelace"},
		{"names match ignoring case and underscores", "{{.first_name}} {{.LASTNAME}} {{.Full_Name}} {{.e_mail}}",
			"Ada Lovelace Ada Lovelace ada@example.com"},
		{"spaces inside the braces are allowed", "{{ .FirstName | default \"x\" }}", "Ada"},
		{"a custom field reads by its key", "{{.Custom.industry}}", "Computing"},
		{"a custom field reads without Custom when no standard field has the name", "{{.industry}}", "Computing"},
		{"a custom field key matches ignoring case, underscores and spaces", "{{.Custom.lead_source}} {{.INDUSTRY}}",
			"conference Computing"},
		{"sender fields read the mailbox", "{{.Sender.Name}} {{.Sender.FirstName}} {{.sender.email}}",
			"Grace Hopper Grace grace@outflow.test"},
		{"the campaign name reads the campaign", "{{.Campaign.Name}}", "Spring Launch"},
		{"a plain body gets the plain signature", "--\n{{.Signature}}", "--\nGrace\nOutflow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := plain(t, tc.src, ada(), template.Options{})
			require.Equal(t, tc.want, r.Plain)
			require.Empty(t, r.Unresolved)
			require.NoError(t, r.Sendable())
		})
	}
}

func TestFallbacksStandInForMissingOrBlankValues(t *testing.T) {
	t.Parallel()
	d := ada()
	d.Contact.FirstName = "   "
	d.Contact.Company = ""
	for _, tc := range []struct {
		name, src, want string
	}{
		{"a blank value takes the fallback", `Hi {{.FirstName | default "there"}},`, "Hi there,"},
		{"an empty value takes the fallback", `at {{.Company | default "your company"}}`, "at your company"},
		{"a present value ignores the fallback", `{{.LastName | default "friend"}}`, "Lovelace"},
		{"a missing custom field takes the fallback", `{{.Custom.role | default "leader"}}`, "leader"},
		{"a blank custom field takes the fallback", `{{.empty | default "n/a"}}`, "n/a"},
		{"an empty fallback resolves to nothing", `[{{.Company | default ""}}]`, "[]"},
		{"the fallback is a Go string with escapes", `{{.Company | default "A \"B\"\tC"}}`, "A \"B\"\tC"},
		{"a missing App value takes the fallback", `{{.App.crm.owner | default "us"}}`, "us"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := plain(t, tc.src, d, template.Options{})
			require.Equal(t, tc.want, r.Plain)
			require.Empty(t, r.Unresolved)
		})
	}
}

func TestAppValuesFollowNestedObjectsAndPrintScalarsAsJSON(t *testing.T) {
	t.Parallel()
	var app map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{
		"crm": {"owner": {"name": "Lin", "score": 12.5, "big": 1e21, "tiny": 0.0000001, "count": 3},
		        "vip": true, "tags": ["a"], "none": null, "blank": "", "Deal_Stage": "won"}}`), &app))
	d := ada()
	d.App = app
	for _, tc := range []struct {
		name, src, want string
		unresolved      []string
	}{
		{"a nested string prints as it is", "{{.App.crm.owner.name}}", "Lin", nil},
		{"numbers print as JSON would", "{{.App.crm.owner.score}} {{.App.crm.owner.count}} {{.App.crm.owner.big}} {{.App.crm.owner.tiny}}",
			"12.5 3 1e+21 1e-7", nil},
		{"a boolean prints as JSON would", "{{.App.crm.vip}}", "true", nil},
		{"keys match ignoring case and underscores", "{{.app.CRM.deal_stage}}", "won", nil},
		{"an object does not resolve", "[{{.App.crm.owner}}]", "[]", []string{"App.crm.owner"}},
		{"an array does not resolve", "[{{.App.crm.tags}}]", "[]", []string{"App.crm.tags"}},
		{"null does not resolve", "[{{.App.crm.none}}]", "[]", []string{"App.crm.none"}},
		{"an empty string does not resolve", "[{{.App.crm.blank}}]", "[]", []string{"App.crm.blank"}},
		{"a path through a scalar does not resolve", "[{{.App.crm.vip.x}}]", "[]", []string{"App.crm.vip.x"}},
		{"a missing output key does not resolve", "[{{.App.billing.plan}}]", "[]", []string{"App.billing.plan"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := plain(t, tc.src, d, template.Options{})
			require.Equal(t, tc.want, r.Plain)
			require.Equal(t, tc.unresolved, r.Unresolved)
		})
	}
}

func TestUnresolvedVariablesAreListedOnceInOrderAndRefused(t *testing.T) {
	t.Parallel()
	d := ada()
	d.Contact.FirstName = ""
	d.Sender.Name = ""
	m, err := template.ParseMessage("{{.first_name}}, a note on {{.Custom.industry}}",
		"Hi {{.first_name}} from {{.Sender.FirstName}}. {{.Custom.budget}} {{.first_name}}",
		"<p>{{.Custom.budget}} {{.App.crm.owner}}</p>")
	require.NoError(t, err)
	r := m.Render(d, template.Options{})
	require.Equal(t, ", a note on Computing", r.Subject)
	require.Equal(t, "Hi  from .  ", r.Plain)
	require.Equal(t, []string{"first_name", "Custom.budget", "App.crm.owner", "Sender.FirstName"}, r.Unresolved,
		"names as written, in the order the subject, HTML body and plain body render them")

	err = r.Sendable()
	require.Error(t, err)
	var ae *apierror.Error
	require.True(t, errors.As(err, &ae))
	require.Equal(t, "unresolved_variables", ae.Code)
	require.Contains(t, ae.Message, "first_name, Custom.budget, App.crm.owner, Sender.FirstName")
	require.Contains(t, ae.Fix, `default "there"`)
}

func TestNilDataLeavesEveryVariableUnresolved(t *testing.T) {
	t.Parallel()
	r := plain(t, "{{.FirstName}}{{.Custom.x}}{{.App.a.b}}{{.Signature}}", nil, template.Options{})
	require.Equal(t, []string{"FirstName", "Custom.x", "App.a.b", "Signature"}, r.Unresolved)
}

func TestHTMLBodiesEscapeValuesButNotTheSignature(t *testing.T) {
	t.Parallel()
	d := ada()
	d.Contact.Company = `<script>alert("x")</script> & 'co'`
	r := htmlBody(t, `<p>{{.Company}}</p><p>{{.Custom.role | default "R&D <lead>"}}</p>{{.Signature}}`, d, template.Options{})
	require.Equal(t, `<p>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#39;co&#39;</p>`+
		`<p>R&amp;D &lt;lead&gt;</p><p>Grace &amp; team</p>`, r.HTML)

	r = plain(t, "{{.Company}}", d, template.Options{})
	require.Equal(t, d.Contact.Company, r.Plain, "a plain body is not escaped")
}

func TestHTMLSignatureFallsBackToTheEscapedPlainSignature(t *testing.T) {
	t.Parallel()
	d := ada()
	d.Sender.SignatureHTML = ""
	d.Sender.SignaturePlain = "Grace <CEO>\r\nOutflow"
	r := htmlBody(t, "<div>{{.Signature}}</div>", d, template.Options{})
	require.Equal(t, "<div>Grace &lt;CEO&gt;<br>\nOutflow</div>", r.HTML)
}

func TestSubjectsFoldLineBreaksIntoSpaces(t *testing.T) {
	t.Parallel()
	d := ada()
	d.Contact.Company = "Acme\r\nBcc: evil@example.com"
	m, err := template.ParseMessage("Hello\n{{.Company}}\rnow <{{.Signature}}>", "", "")
	require.NoError(t, err)
	r := m.Render(d, template.Options{})
	require.Equal(t, "Hello Acme Bcc: evil@example.com now <Grace Outflow>", r.Subject)
	require.NotContains(t, r.Subject, "\r")
	require.NotContains(t, r.Subject, "\n")
}

func TestParseMessageNamesThePartOfAnError(t *testing.T) {
	t.Parallel()
	_, err := template.ParseMessage("ok", "fine", "<p>\n  {{.FirstName</p>")
	var ae *apierror.Error
	require.True(t, errors.As(err, &ae))
	require.Equal(t, "invalid_template", ae.Code)
	require.Equal(t, `body_html: unclosed "{{" (close it with "}}" on the same line) at line 2 column 3`, ae.Message)
}

func TestEmptyPartsRenderEmpty(t *testing.T) {
	t.Parallel()
	m, err := template.ParseMessage("", "", "")
	require.NoError(t, err)
	r := m.Render(ada(), template.Options{})
	require.Equal(t, template.Rendered{}, r)
}

func TestRenderingFromManyGoroutinesGivesTheSameMessages(t *testing.T) {
	t.Parallel()
	m, err := template.ParseMessage("{Hi|Hello} {{.FirstName}}", "{a|b} https://a.test/{{.Custom.industry}} {{.Signature}}",
		`<a href="https://a.test" title="{{.FirstName}}">a</a> {x|y} {{.Signature}}`)
	require.NoError(t, err)
	d := ada()
	d.Sender.SignatureHTML = `<a href="https://grace.test">Grace</a>`
	opts := func(seed uint64) template.Options {
		return template.Options{Seed: seed, UTM: utm, Links: func(i int, u string) string { return fmt.Sprint(seed, i, u) }}
	}
	want := make([]template.Rendered, 64)
	for i := range want {
		want[i] = m.Render(d, opts(uint64(i)))
	}
	done := make(chan error)
	for range 8 {
		go func() {
			for i := range want {
				if got := m.Render(d, opts(uint64(i))); !reflect.DeepEqual(got, want[i]) {
					done <- fmt.Errorf("seed %d rendered %+v, want %+v", i, got, want[i])
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		require.NoError(t, <-done)
	}
}

package template_test

import (
	"bytes"
	"fmt"
	"regexp"
	"testing"
	texttemplate "text/template"

	"github.com/outflowhq/outflow/internal/campaigns/template"
)

// benchSteps is a realistic three-step campaign: each step a subject, a plain body and an HTML body of
// about 1 to 2 KB with 6 to 10 variables (some with fallbacks), spintax and 3 to 5 links.
var benchSteps = [3][3]string{
	{
		`{Quick question|A thought} for {{.Company | default "your team"}}`,
		`{Hi|Hello|Hey} {{.FirstName | default "there"}},

I noticed {{.Company | default "your company"}} has been growing its {{.Custom.industry | default "operations"}} team in
{{.Custom.city | default "your area"}} this year. Teams like yours usually spend a surprising amount of time stitching
outbound tools together, and the cost shows up later as missed replies and bounced sequences.

We built Outflow so that one platform runs the whole loop: mailboxes, warmup, sequences, the unified inbox and the
analytics that tell you which message worked. You can see a two-minute tour at https://outflow.test/tour?ref=email
and the pricing at https://outflow.test/pricing.

Customers in {{.Custom.industry | default "your industry"}} typically cut their tooling spend by a third in the first
quarter; the case study is at https://outflow.test/customers/acme#results if you want the numbers.

Would it be worth a 15-minute call next week to see whether it fits {{.Company | default "your team"}}? You can pick a
time that suits you at https://cal.test/{{.Sender.FirstName}}/15min.

{Best|Cheers|Thanks},
{{.Sender.FirstName}}
{{.Signature}}`,
		`<html><head><style>p{margin:0 0 12px 0} a{color:#0b5fff}</style></head><body>
<p>{Hi|Hello|Hey} {{.FirstName | default "there"}},</p>
<p>I noticed {{.Company | default "your company"}} has been growing its {{.Custom.industry | default "operations"}} team in
{{.Custom.city | default "your area"}} this year. Teams like yours usually spend a surprising amount of time stitching
outbound tools together, and the cost shows up later as missed replies and bounced sequences.</p>
<p>We built Outflow so that one platform runs the whole loop: mailboxes, warmup, sequences, the unified inbox and the
analytics that tell you which message worked. You can see <a href="https://outflow.test/tour?ref=email">a two-minute
tour</a> and <a href="https://outflow.test/pricing">the pricing</a>.</p>
<p>Customers in {{.Custom.industry | default "your industry"}} typically cut their tooling spend by a third in the
first quarter; <a href="https://outflow.test/customers/acme#results">the case study</a> has the numbers.</p>
<p>Would it be worth a 15-minute call next week to see whether it fits {{.Company | default "your team"}}?
<a href="https://cal.test/book/15min?utm_source=partner">Pick a time</a> that suits you.</p>
<p>{Best|Cheers|Thanks},<br>{{.Sender.FirstName}}</p>
{{.Signature}}
</body></html>`,
	},
	{
		`Re: {Quick question|A thought} for {{.Company | default "your team"}}`,
		`{Hi|Hello} {{.FirstName | default "there"}}, following up on my note about {{.Company | default "your team"}}.

One thing I did not mention: every mailbox in Outflow warms up on its own schedule, and the sequence engine never
exceeds a mailbox's daily cap, so deliverability stays high while volume grows. The deliverability report for teams
in {{.Custom.industry | default "your industry"}} is at https://outflow.test/reports/deliverability and the
security overview at https://outflow.test/security.

If {{.Custom.city | default "your city"}} is convenient, I am around later this month and happy to stop by.
Otherwise a short call works: https://cal.test/book/15min. You can also reply to {{.Sender.Email}} directly.

{{.Sender.FirstName}}
{{.Signature}}`,
		`<html><body><p>{Hi|Hello} {{.FirstName | default "there"}}, following up on my note about
{{.Company | default "your team"}}.</p>
<p>One thing I did not mention: every mailbox in Outflow warms up on its own schedule, and the sequence engine never
exceeds a mailbox's daily cap, so deliverability stays high while volume grows. Read
<a href="https://outflow.test/reports/deliverability">the deliverability report</a> for teams in
{{.Custom.industry | default "your industry"}} and <a href="https://outflow.test/security">the security
overview</a>.</p>
<p>If {{.Custom.city | default "your city"}} is convenient, I am around later this month and happy to stop by.
Otherwise <a href="https://cal.test/book/15min">a short call</a> works. You can also reply to
<a href="mailto:{{.Sender.Email}}">{{.Sender.Email}}</a> directly.</p>
<p>{{.Sender.FirstName}}</p>
{{.Signature}}
</body></html>`,
	},
	{
		`{Closing the loop|Last note}, {{.FirstName | default "there"}}`,
		`{Hi|Hello} {{.FirstName | default "there"}},

I have not heard back, so I will assume the timing is not right for {{.Company | default "your team"}}. If that
changes, the fastest way to see Outflow is the sandbox at https://outflow.test/sandbox, which comes loaded with a
sample campaign for {{.Custom.industry | default "your industry"}}. The changelog at https://outflow.test/changelog
shows what shipped this month, and https://outflow.test/docs/quickstart gets a first campaign out in ten minutes.

{{.LastName | default ""}} {{.FirstName | default ""}}, thanks for reading, and good luck with the quarter in
{{.Custom.city | default "town"}}.

{{.Sender.Name}}
{{.Signature}}`,
		`<html><body><p>{Hi|Hello} {{.FirstName | default "there"}},</p>
<p>I have not heard back, so I will assume the timing is not right for {{.Company | default "your team"}}. If that
changes, the fastest way to see Outflow is <a href="https://outflow.test/sandbox">the sandbox</a>, which comes
loaded with a sample campaign for {{.Custom.industry | default "your industry"}}.
<a href="https://outflow.test/changelog">The changelog</a> shows what shipped this month, and
<a href="https://outflow.test/docs/quickstart">the quickstart</a> gets a first campaign out in ten minutes.</p>
<p>{{.LastName | default ""}} {{.FirstName | default ""}}, thanks for reading, and good luck with the quarter in
{{.Custom.city | default "town"}}.</p>
<p>{{.Sender.Name}}</p>
{{.Signature}}
</body></html>`,
	},
}

var (
	// fallback and spin turn our syntax into text/template's: fallbacks into `or`, spintax into its first
	// option (innermost groups first).
	fallback = regexp.MustCompile(`\{\{(\.[\w.]+) \| default ("[^"]*")\}\}`)
	spin     = regexp.MustCompile(`\{([^{}|]*)\|[^{}]*\}`)
)

// baseline is the same source for text/template, without spintax.
func baseline(src string) string {
	src = fallback.ReplaceAllString(src, `{{or $1 $2}}`)
	for spin.MatchString(src) {
		src = spin.ReplaceAllString(src, `$1`)
	}
	return src
}

// baseData is what text/template executes against: the same values, in a struct it reads by reflection.
type baseData struct {
	FirstName, LastName, Email, Company string
	Custom                              map[string]string
	Sender                              struct{ Name, FirstName, Email string }
	Signature                           string
}

// benchContacts are n contacts, some without a first name, a company or custom fields, as lists are.
func benchContacts(n int) ([]template.Data, []baseData) {
	ours, theirs := make([]template.Data, n), make([]baseData, n)
	for i := range n {
		c := template.Contact{FirstName: fmt.Sprintf("First%d", i), LastName: fmt.Sprintf("Last%d", i),
			Email: fmt.Sprintf("c%d@example.com", i), Company: fmt.Sprintf("Company %d & Sons", i),
			Custom: map[string]string{"industry": "logistics", "city": "Lyon", "size": "50"}}
		if i%5 == 0 {
			c.FirstName = ""
		}
		if i%7 == 0 {
			c.Company = ""
			c.Custom = nil
		}
		s := template.Sender{Name: "Grace Hopper", Email: "grace@outflow.test",
			SignatureHTML: "<p>Grace Hopper<br>Outflow</p>", SignaturePlain: "Grace Hopper\nOutflow"}
		ours[i] = template.Data{Contact: c, Sender: s, Campaign: template.Campaign{Name: "Spring Launch"}}
		b := baseData{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Company: c.Company,
			Custom: c.Custom, Signature: s.SignaturePlain}
		b.Sender.Name, b.Sender.FirstName, b.Sender.Email = s.Name, "Grace", s.Email
		theirs[i] = b
	}
	return ours, theirs
}

// sink keeps rendered text alive so the compiler cannot drop the work.
var sink string

// BenchmarkTemplateRender renders the three-step campaign for 10,000 contacts per op: baseline with Go's
// text/template on the same text (no spintax, links or escaping), outflow with this engine (spintax, UTM
// tagging of every link, HTML escaping). scripts/bench-ratios reports outflow as a ratio to baseline.
func BenchmarkTemplateRender(b *testing.B) {
	ours, theirs := benchContacts(10_000)
	b.Run("baseline", func(b *testing.B) {
		var steps [3][3]*texttemplate.Template
		for i, step := range benchSteps {
			for j, src := range step {
				steps[i][j] = texttemplate.Must(texttemplate.New("").Parse(baseline(src)))
			}
		}
		var buf bytes.Buffer
		b.ReportAllocs()
		for b.Loop() {
			for c := range theirs {
				for _, step := range steps {
					buf.Reset()
					for _, t := range step {
						if err := t.Execute(&buf, &theirs[c]); err != nil {
							b.Fatal(err)
						}
					}
					sink = buf.String()
				}
			}
		}
	})
	b.Run("outflow", func(b *testing.B) {
		var steps [3]*template.Message
		for i, step := range benchSteps {
			m, err := template.ParseMessage(step[0], step[1], step[2])
			if err != nil {
				b.Fatal(err)
			}
			steps[i] = m
		}
		utm := template.NewUTM("", "", "", "Spring Launch")
		b.ReportAllocs()
		for b.Loop() {
			for c := range ours {
				for s, m := range steps {
					r := m.Render(&ours[c], template.Options{Seed: uint64(c)<<2 | uint64(s), UTM: utm})
					if len(r.Unresolved) > 0 {
						b.Fatalf("contact %d step %d: unresolved %v", c, s, r.Unresolved)
					}
					sink = r.HTML
				}
			}
		}
	})
}

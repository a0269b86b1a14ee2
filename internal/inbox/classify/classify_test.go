package classify_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/inbox/classify"
	"github.com/outflowhq/outflow/internal/mail/dsn"
)

func rules(t testing.TB) *classify.Rules {
	r, err := classify.NewRules()
	require.NoError(t, err)
	return r
}

func judge(t *testing.T, m classify.Message) classify.Verdict {
	if m.Received.IsZero() {
		m.Received = fixed
	}
	v := rules(t).Classify(m, classify.Keywords{}, fixed)
	require.NotEmpty(t, v.Evidence)
	require.Equal(t, classify.Engine, v.Engine)
	return v
}

// TestAReportIsAutomatedWhateverItsHeadersSay: a bounce saying Auto-Submitted: auto-replied with an
// out-of-office subject is still a report.
func TestAReportIsAutomatedWhateverItsHeadersSay(t *testing.T) {
	v := judge(t, classify.Message{Subject: "Out of office", Headers: map[string][]string{"Auto-Submitted": {"auto-replied"}},
		Report: &dsn.Report{Kind: dsn.KindBounce, Shape: dsn.ShapePostfix}})
	require.Equal(t, classify.Automated, v.Intent)
	require.Equal(t, "report", v.Evidence[0].Kind)
}

// TestAutoReplyHeadersDecideBeforeTheText: an Auto-Submitted message saying "interested" is not a person's
// answer; with out-of-office text it is out of office, with a return date read in German.
func TestAutoReplyHeadersDecideBeforeTheText(t *testing.T) {
	v := judge(t, classify.Message{Subject: "We got your message", Text: "Thanks, we are interested in every request. Ticket 123.",
		Headers: map[string][]string{"auto-submitted": {"auto-generated"}}})
	require.Equal(t, classify.Automated, v.Intent)
	require.Equal(t, classify.Evidence{Kind: "header", Name: "Auto-Submitted", Value: "auto-generated"}, v.Evidence[0])

	v = judge(t, classify.Message{Subject: "Abwesenheitsnotiz: Ihre Anfrage", Text: "Ich bin bis zum 21.07.2025 nicht im Büro.",
		Headers: map[string][]string{"X-Autoreply": {"yes"}}})
	require.Equal(t, classify.OutOfOffice, v.Intent)
	require.NotNil(t, v.ReturnDate)
	require.Equal(t, "2025-07-21", v.ReturnDate.Format(time.DateOnly))
	require.Equal(t, "de", v.Language)
}

// TestReturnDatesAreReadInEachLanguageAndFormat reads the return date of out-of-office texts received on
// 10 July 2025, and refuses dates in the past or more than 90 days away.
func TestReturnDatesAreReadInEachLanguageAndFormat(t *testing.T) {
	for text, want := range map[string]string{
		"I am out of the office and back on July 15th.":                         "2025-07-15",
		"I am out of the office until 15 July, limited access to email.":        "2025-07-15",
		"Out of office. Back on 2025-08-01.":                                    "2025-08-01",
		"I'm out of the office, returning Monday, 8/4.":                         "2025-08-04",
		"Ich bin im Urlaub und ab dem 15. Juli wieder im Büro.":                 "2025-07-15",
		"Je suis absent du bureau, de retour le 15 juillet.":                    "2025-07-15",
		"Je suis en congés jusqu'au 15/07/2025.":                                "2025-07-15",
		"Estoy de vacaciones, de vuelta el 15 de julio.":                        "2025-07-15",
		"I am out of the office until 5 July.":                                  "", // the next 5 July is more than 90 days away
		"I am out of the office until 2025-07-01 with limited access to email.": "",
	} {
		v := judge(t, classify.Message{Subject: "Out of office", Text: text, Headers: map[string][]string{"Auto-Submitted": {"auto-replied"}}})
		require.Equal(t, classify.OutOfOffice, v.Intent, text)
		if want == "" {
			require.Nil(t, v.ReturnDate, text)
			continue
		}
		require.NotNil(t, v.ReturnDate, text)
		require.Equal(t, want, v.ReturnDate.Format(time.DateOnly), text)
	}
}

// TestAPersonsTextIsJudgedWithoutItsQuote: the quoted campaign text ("interested?", an unsubscribe footer)
// does not count; negation turns a positive phrase; an unsubscribe request is negative.
func TestAPersonsTextIsJudgedWithoutItsQuote(t *testing.T) {
	quote := "\n\nOn Mon, Jul 7, 2025 at 9:00 AM Sam <sam@example.com> wrote:\n> Interested in a quick call?\n> Unsubscribe: https://x\n"
	for text, want := range map[string]classify.Intent{
		"Sounds good, let's talk next week." + quote:                        classify.Positive,
		"Thanks, but we are not really interested." + quote:                 classify.Negative,
		"How much does it cost per seat?" + quote:                           classify.Question,
		"I've forwarded this to my colleague who handles it." + quote:       classify.Neutral,
		"Am Mo., 7. Juli schrieb Sam:\n> Interesse?\n\nKein Bedarf, danke.": classify.Negative,
	} {
		v := judge(t, classify.Message{Subject: "Re: Quick question", Text: text})
		require.Equal(t, want, v.Intent, text)
		require.False(t, v.Unsubscribe, text)
	}
	v := judge(t, classify.Message{Subject: "Re: Quick question", Text: "Please remove me from your list." + quote})
	require.Equal(t, classify.Negative, v.Intent)
	require.True(t, v.Unsubscribe)
}

// TestCampaignKeywordsExtendTheLists: a keyword of the campaign decides, with evidence kind keyword.
func TestCampaignKeywordsExtendTheLists(t *testing.T) {
	m := classify.Message{Subject: "Re: Quick question", Text: "Ping me on the blue channel.", Received: fixed}
	require.Equal(t, classify.Neutral, rules(t).Classify(m, classify.Keywords{}, fixed).Intent)
	v := rules(t).Classify(m, classify.Keywords{Positive: []string{"Blue Channel"}}, fixed)
	require.Equal(t, classify.Positive, v.Intent)
	require.Equal(t, classify.Evidence{Kind: "keyword", Name: "positive", Value: "Blue Channel"}, v.Evidence[0])
}

// FuzzClassify: whatever arrives, the rules answer a verdict with evidence and never panic.
func FuzzClassify(f *testing.F) {
	f.Add("Re: hi", "Sounds good?\n> quoted", "<p>hi</p>", "Auto-Submitted", "auto-replied")
	f.Add("Abwesenheitsnotiz", "bis 31.12. nicht im Büro", "", "Precedence", "bulk")
	f.Add("", "", "<blockquote>", "", "")
	r := rules(f)
	f.Fuzz(func(t *testing.T, subject, text, html, hk, hv string) {
		v := r.Classify(classify.Message{Subject: subject, Text: text, HTML: html, Headers: map[string][]string{hk: {hv}}, Received: fixed},
			classify.Keywords{Positive: []string{subject}}, fixed)
		if len(v.Evidence) == 0 || v.Intent == "" {
			t.Fatalf("verdict without intent or evidence: %+v", v)
		}
	})
}

package compose_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
)

const unsubURL = "https://t.outflow.test/u/TOKEN"

// withLine composes a one-step campaign message with an unsubscribe line (and tracking when tr is set).
func withLine(t *testing.T, c dbq.Campaign, html, plain string, u *compose.Unsubscribe, tr *compose.Tracking) compose.Message {
	t.Helper()
	c.Name = "Spring Launch"
	step := campaign.Step{ID: uuid.New(), Kind: campaign.StepEmail, Subject: "Hello", BodyHTML: html, BodyPlain: plain}
	m, err := compose.Compose(compose.Input{Campaign: &c, Steps: []campaign.Step{step}, Step: &step, Contact: ada(),
		Sender: mailbox(), Tracking: tr, Unsubscribe: u})
	require.NoError(t, err)
	return m
}

func TestTheUnsubscribeLineEndsBothBodiesAsTextOrAsALinkToTheUnsubscribePage(t *testing.T) {
	t.Parallel()
	line := campaign.DefaultOverrides().Unsubscribe
	html, plain := "<html><body><p>Hi {{.FirstName}}</p></BODY></html>", "Hi {{.FirstName}}"

	line.Mode, line.Text = "text", "Rather not hear from me? Say so & I'll stop."
	m := withLine(t, dbq.Campaign{}, html, plain, &compose.Unsubscribe{Line: line, URL: unsubURL}, nil)
	require.Equal(t, "Hi Ada\n\nRather not hear from me? Say so & I'll stop.", m.Plain)
	require.Equal(t, "<html><body><p>Hi Ada</p><p>Rather not hear from me? Say so &amp; I&#39;ll stop.</p></BODY></html>", m.HTML,
		"the text goes escaped into a paragraph just before </body>")

	line.Mode = "link"
	m = withLine(t, dbq.Campaign{}, html, plain, &compose.Unsubscribe{Line: line, URL: unsubURL}, nil)
	require.Equal(t, "Hi Ada\n\nNot interested? Unsubscribe: "+unsubURL, m.Plain)
	require.Equal(t, `<html><body><p>Hi Ada</p><p>Not interested? <a href="`+unsubURL+`">Unsubscribe</a></p></BODY></html>`, m.HTML)

	line.LinkIntro = ""
	m = withLine(t, dbq.Campaign{}, "<p>Hi</p>", "", &compose.Unsubscribe{Line: line, URL: unsubURL}, nil)
	require.Equal(t, `<p>Hi</p><p><a href="`+unsubURL+`">Unsubscribe</a></p>`, m.HTML, "without </body> the line goes at the end")
	require.Empty(t, m.Plain, "a body the message lacks gets no line")

	m = withLine(t, dbq.Campaign{TextOnly: true}, html, plain, &compose.Unsubscribe{Line: line, URL: unsubURL}, nil)
	require.Empty(t, m.HTML)
	require.Equal(t, "Hi Ada\n\nUnsubscribe: "+unsubURL, m.Plain, "text_only campaigns get the line too")
}

func TestNoUnsubscribeLineIsAddedWhenTheModeIsOffOrTheLinkHasNoPage(t *testing.T) {
	t.Parallel()
	html, plain := "<html><body><p>Hi</p></body></html>", "Hi"
	want := withLine(t, dbq.Campaign{}, html, plain, nil, nil)
	line := campaign.DefaultOverrides().Unsubscribe
	require.Equal(t, "off", line.Mode, "the default mode appends nothing")
	for name, u := range map[string]*compose.Unsubscribe{
		"mode off":          {Line: line, URL: unsubURL},
		"link without page": {Line: campaign.Unsubscribe{Mode: "link", LinkText: "Unsubscribe"}},
		"blank text":        {Line: campaign.Unsubscribe{Mode: "text", Text: "  "}, URL: unsubURL},
	} {
		require.Equal(t, want, withLine(t, dbq.Campaign{}, html, plain, u, nil), name)
	}
}

func TestTheUnsubscribeLinkIsNeverATrackedLinkAndComesBeforeThePixel(t *testing.T) {
	t.Parallel()
	s := signer(t)
	tr := &compose.Tracking{Signer: s, BaseURL: "https://t.outflow.test", OrganizationID: uuid.New(), TaskID: uuid.New()}
	line := campaign.Unsubscribe{Mode: "link", LinkIntro: "Not interested?", LinkText: "Unsubscribe"}
	m := withLine(t, dbq.Campaign{OpenTracking: true, LinkTracking: true}, trackedHTML, trackedPlain,
		&compose.Unsubscribe{Line: line, URL: unsubURL}, tr)
	require.Contains(t, m.HTML, `<a href="`+unsubURL+`">Unsubscribe</a></p><img src="https://t.outflow.test/t/o/`)
	require.True(t, strings.HasSuffix(m.Plain, "Unsubscribe: "+unsubURL), m.Plain)
	want := withLine(t, dbq.Campaign{OpenTracking: true, LinkTracking: true}, trackedHTML, trackedPlain, nil, tr)
	require.Len(t, clickRE.FindAllString(m.HTML, -1), len(clickRE.FindAllString(want.HTML, -1)),
		"only the content's own links are tracked")
}

package compose_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/compose"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

func signer(t *testing.T) *tracking.Signer {
	t.Helper()
	s, err := tracking.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	return s
}

func TestTrackingBaseURLPrefersAVerifiedCampaignDomainThenTheMailboxsThenTheDeployments(t *testing.T) {
	t.Parallel()
	verified := time.Now()
	for name, tc := range map[string]struct {
		c    *dbq.Campaign
		m    *dbq.Mailbox
		host string
		want string
	}{
		"verified campaign domain": {&dbq.Campaign{TrackingDomain: "go.acme.test", TrackingDomainVerifiedAt: &verified},
			&dbq.Mailbox{TrackingDomain: "mb.acme.test", TrackingDomainVerified: true}, "t.outflow.test", "https://go.acme.test"},
		"unverified campaign domain, verified mailbox domain": {&dbq.Campaign{TrackingDomain: "go.acme.test"},
			&dbq.Mailbox{TrackingDomain: "mb.acme.test", TrackingDomainVerified: true}, "t.outflow.test", "https://mb.acme.test"},
		"unverified mailbox domain": {&dbq.Campaign{},
			&dbq.Mailbox{TrackingDomain: "mb.acme.test"}, "t.outflow.test", "https://t.outflow.test"},
		"no custom domain": {&dbq.Campaign{}, &dbq.Mailbox{}, "t.outflow.test", "https://t.outflow.test"},
		"no tracking host": {&dbq.Campaign{}, &dbq.Mailbox{}, "", "http://localhost:8080"},
		"nothing known":    {nil, nil, "", "http://localhost:8080"},
	} {
		require.Equal(t, tc.want, compose.TrackingBaseURL(tc.c, tc.m, tc.host, "http://localhost:8080/"), name)
	}
}

const trackedHTML = `<html><body><p>Hi {{.FirstName}}</p><a href="https://example.com/pricing">pricing</a>
<a href="mailto:sales@example.com">mail</a> <a href="tel:+15551234">call</a> <a href="#top">top</a>
<a href="ftp://files.example.com/x">files</a> <a href="http://example.com/a?x=1&amp;y=2">a</a>
<a href="https://example.com/long?q=LONG">long</a></BODY></html>`

const trackedPlain = "Hi {{.FirstName}}, see https://example.com/pricing or write to mailto:sales@example.com"

// tracked composes a one-step campaign message with the given tracking settings, tracked for task.
func tracked(t *testing.T, c dbq.Campaign, html, plain string, tr *compose.Tracking) compose.Message {
	t.Helper()
	c.Name = "Spring Launch"
	step := campaign.Step{ID: uuid.New(), Kind: campaign.StepEmail, Subject: "Hello", BodyHTML: html, BodyPlain: plain}
	m, err := compose.Compose(compose.Input{Campaign: &c, Steps: []campaign.Step{step}, Step: &step, Contact: ada(),
		Sender: mailbox(), Tracking: tr})
	require.NoError(t, err)
	return m
}

var (
	pixelRE = regexp.MustCompile(`<img src="https://t\.outflow\.test/t/o/([A-Za-z0-9_-]+)" width="1" height="1" alt="" style="display:none">`)
	clickRE = regexp.MustCompile(`https://t\.outflow\.test/t/c/([A-Za-z0-9_-]+)`)
)

func TestOpenTrackingAddsOnePixelBeforeTheBodyEndOnlyToAnHTMLMessage(t *testing.T) {
	t.Parallel()
	s, org, task := signer(t), uuid.New(), uuid.Must(uuid.NewV7())
	tr := &compose.Tracking{Signer: s, BaseURL: "https://t.outflow.test", OrganizationID: org, TaskID: task}

	m := tracked(t, dbq.Campaign{OpenTracking: true}, trackedHTML, trackedPlain, tr)
	found := pixelRE.FindAllStringSubmatchIndex(m.HTML, -1)
	require.Len(t, found, 1, m.HTML)
	require.True(t, strings.HasPrefix(m.HTML[found[0][1]:], "</BODY></html>"), "the pixel goes just before </body>, in any case")
	tok, err := s.Parse(m.HTML[found[0][2]:found[0][3]], tracking.KindOpen)
	require.NoError(t, err)
	require.Equal(t, tracking.Token{Kind: tracking.KindOpen, OrganizationID: org, TaskID: task}, tok)
	require.NotContains(t, m.Plain, "/t/o/", "the plain body has no pixel")
	require.NotContains(t, m.HTML, "/t/c/", "open tracking alone leaves links as written")

	m = tracked(t, dbq.Campaign{OpenTracking: true}, "<p>No body tag</p>", "", tr)
	require.Regexp(t, `^<p>No body tag</p>`+pixelRE.String()+`$`, m.HTML, "without </body> the pixel goes at the end")

	m = tracked(t, dbq.Campaign{OpenTracking: true}, "", trackedPlain, tr)
	require.Empty(t, m.HTML, "a plain-only message gets no HTML part for a pixel")
	m = tracked(t, dbq.Campaign{OpenTracking: true, TextOnly: true}, trackedHTML, trackedPlain, tr)
	require.Empty(t, m.HTML)
	require.NotContains(t, m.Plain, "/t/")
}

func TestLinkTrackingRewritesEachWebLinkToATokenOfItsNumberAndTaggedTarget(t *testing.T) {
	t.Parallel()
	s, org, task := signer(t), uuid.New(), uuid.Must(uuid.NewV7())
	tr := &compose.Tracking{Signer: s, BaseURL: "https://t.outflow.test", OrganizationID: org, TaskID: task}
	long := "https://example.com/long?q=" + strings.Repeat("x", tracking.MaxURLLength)
	html := strings.Replace(trackedHTML, "https://example.com/long?q=LONG", long, 1)

	m := tracked(t, dbq.Campaign{LinkTracking: true, UtmTracking: true}, html, trackedPlain, tr)
	tagged := func(u string, n int) string {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		return u + sep + "utm_source=outflow&utm_medium=email&utm_campaign=spring-launch&utm_content=link-" + string(rune('1'+n)) // utm_content counts from 1
	}
	want := []tracking.Token{
		{Kind: tracking.KindClick, OrganizationID: org, TaskID: task, LinkIndex: 0, URL: tagged("https://example.com/pricing", 0)},
		{Kind: tracking.KindClick, OrganizationID: org, TaskID: task, LinkIndex: 1, URL: tagged("http://example.com/a?x=1&y=2", 1)},
	}
	var got []tracking.Token
	for _, match := range clickRE.FindAllStringSubmatch(m.HTML, -1) {
		tok, err := s.Parse(match[1], tracking.KindClick)
		require.NoError(t, err)
		got = append(got, tok)
	}
	require.Equal(t, want, got, m.HTML)
	for _, asWritten := range []string{`href="mailto:sales@example.com"`, `href="tel:+15551234"`, `href="#top"`,
		`href="ftp://files.example.com/x"`, `href="` + long + `&amp;utm_source=outflow`} {
		require.Contains(t, m.HTML, asWritten, "links that cannot be tracked go out as written (UTM-tagged when tagging is on)")
	}
	require.NotContains(t, m.HTML, "/t/o/", "link tracking alone adds no pixel")

	plain := clickRE.FindAllStringSubmatch(m.Plain, -1)
	require.Len(t, plain, 1, m.Plain)
	tok, err := s.Parse(plain[0][1], tracking.KindClick)
	require.NoError(t, err)
	require.Equal(t, want[0], tok, "the plain body's link shares the HTML link's number")
	require.Contains(t, m.Plain, "mailto:sales@example.com")
}

func TestWithoutTrackingTheMessageIsExactlyAsComposedBefore(t *testing.T) {
	t.Parallel()
	s := signer(t)
	tr := &compose.Tracking{Signer: s, BaseURL: "https://t.outflow.test", OrganizationID: uuid.New(), TaskID: uuid.New()}
	for name, tc := range map[string]struct {
		c  dbq.Campaign
		tr *compose.Tracking
	}{
		"tracking settings on, no tracking given": {dbq.Campaign{OpenTracking: true, LinkTracking: true, UtmTracking: true}, nil},
		"no signer":                  {dbq.Campaign{OpenTracking: true, LinkTracking: true}, &compose.Tracking{BaseURL: "https://t.outflow.test"}},
		"both tracking settings off": {dbq.Campaign{UtmTracking: true}, tr},
		"text_only":                  {dbq.Campaign{OpenTracking: true, LinkTracking: true, TextOnly: true}, tr},
	} {
		want := tracked(t, tc.c, trackedHTML, trackedPlain, nil)
		got := tracked(t, tc.c, trackedHTML, trackedPlain, tc.tr)
		require.Equal(t, want, got, name)
		require.NotContains(t, got.HTML+got.Plain, "/t/", name)
	}
	plain := tracked(t, dbq.Campaign{}, trackedHTML, trackedPlain, nil)
	require.Contains(t, plain.HTML, `<a href="https://example.com/pricing">`, "untracked links are as written")
}

package engine_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/eventing/events"
)

// bodies are a sent message's plain and HTML parts, decoded.
func bodies(t *testing.T, raw []byte) (plain, html string) {
	t.Helper()
	mr, err := mail.CreateReader(strings.NewReader(string(raw)))
	require.NoError(t, err)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return plain, html
		}
		require.NoError(t, err)
		b, err := io.ReadAll(p.Body)
		require.NoError(t, err)
		if h, ok := p.Header.(*mail.InlineHeader); ok {
			if ct, _, _ := h.ContentType(); ct == "text/html" {
				html = string(b)
			} else {
				plain = string(b)
			}
		}
	}
}

func TestACampaignWithTrackingSendsThePixelAndTrackedLinksOnTheMailboxsVerifiedDomain(t *testing.T) {
	r := newRig(t)
	signer, err := tracking.NewSigner(r.env.Config.SecretKey)
	require.NoError(t, err)
	eng := engine.New(r.env.DB.Pool, engine.Options{AuthGrace: 72 * time.Hour, Now: r.now,
		Tracking: engine.Tracking{Signer: signer, Host: "t.outflow.test", PublicURL: "http://api.outflow.test"}})
	r.exec(t, `UPDATE mailboxes SET tracking_domain = 'track.acme.test', tracking_domain_verified = true WHERE id = $1`, r.box.ID)

	steps := []api.CampaignStepCreate{{Subject: api.NewOptString("Hello {{.FirstName}}"),
		BodyPlain: api.NewOptString("Hi {{.FirstName}}, see https://example.com/pricing"),
		BodyHTML: api.NewOptString(`<html><body><p>Hi {{.FirstName}}</p><a href="https://example.com/pricing">pricing</a>` +
			` <a href="mailto:sales@example.com">write</a></body></html>`)}}
	campaignWith := func(open, link bool, email string) uuid.UUID {
		id := r.create(t, steps)
		r.exec(t, `UPDATE campaigns SET open_tracking = $2, link_tracking = $3, utm_tracking = false, text_only = false WHERE id = $1`,
			id, open, link)
		r.addLeads(t, id, email)
		r.start(t, id)
		return id
	}
	campaignWith(true, true, "tracked@example.net")
	campaignWith(false, false, "plain@example.net")

	st, err := eng.RunDue(context.Background(), r.jobs)
	require.NoError(t, err)
	require.Equal(t, 2, st.Sends)
	require.Equal(t, 2, r.work(t))

	sent := map[string][]byte{}
	for _, m := range r.smtp.Messages() {
		sent[m.To[0]] = m.Data
	}
	require.Len(t, sent, 2)

	var task uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM send_tasks WHERE to_email = 'tracked@example.net'`).Scan(&task)
	})
	require.Equal(t, "<"+task.String()+"@example.com>", header(t, sent["tracked@example.net"], "Message-Id"))
	plain, html := bodies(t, sent["tracked@example.net"])
	pixel := regexp.MustCompile(`<img src="https://track\.acme\.test/t/o/([A-Za-z0-9_-]+)" width="1" height="1" alt="" style="display:none"></body>`).
		FindStringSubmatch(html)
	require.NotNil(t, pixel, html)
	open, err := signer.Parse(pixel[1], tracking.KindOpen)
	require.NoError(t, err)
	require.Equal(t, tracking.Token{Kind: tracking.KindOpen, OrganizationID: r.org, TaskID: task}, open,
		"the pixel names the send task the message was enqueued as")

	click := regexp.MustCompile(`https://track\.acme\.test/t/c/([A-Za-z0-9_-]+)`)
	for part, body := range map[string]string{"html": html, "plain": plain} {
		links := click.FindAllStringSubmatch(body, -1)
		require.Len(t, links, 1, part+": "+body)
		tok, err := signer.Parse(links[0][1], tracking.KindClick)
		require.NoError(t, err)
		require.Equal(t, tracking.Token{Kind: tracking.KindClick, OrganizationID: r.org, TaskID: task, LinkIndex: 0,
			URL: "https://example.com/pricing"}, tok, part)
	}
	require.Contains(t, html, `href="mailto:sales@example.com"`, "a mailto link is not tracked")
	require.NotContains(t, html, "example.com/pricing\"", "the tracked link is not also sent as written")

	plain, html = bodies(t, sent["plain@example.net"])
	require.Contains(t, html, `<a href="https://example.com/pricing">pricing</a>`)
	require.Contains(t, plain, "see https://example.com/pricing")
	require.NotContains(t, html+plain, "/t/", "a campaign with tracking off sends no pixel and no tracked link")
}

// fetch GETs a tracking path on the API server with userAgent ("" sends none), at the tracking clock's at.
func (r *rig) fetch(t *testing.T, at time.Time, path, userAgent string) int {
	t.Helper()
	r.env.Clock.Set(at)
	defer r.env.Clock.Set(time.Time{})
	req, err := http.NewRequest(http.MethodGet, r.env.Server.URL+path, nil)
	require.NoError(t, err)
	req.Header["User-Agent"] = []string{userAgent}
	client := *r.env.Server.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

func TestStepConditionsCountOnlyAPersonsOpensAndClicks(t *testing.T) {
	r := newRig(t)
	opened := r.campaign(t, conditioned("opened", "skip"), "proxied@example.net", "reader@example.net")
	clicked := r.campaign(t, conditioned("clicked", "skip"), "scanned@example.net", "clicker@example.net")
	require.Equal(t, 4, r.run(t).Sends)
	require.Equal(t, 4, r.work(t))

	signer, err := tracking.NewSigner(r.env.Config.SecretKey)
	require.NoError(t, err)
	token := func(campaign uuid.UUID, email string, kind tracking.Kind) string {
		var task uuid.UUID
		r.query(t, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT id FROM send_tasks WHERE campaign_id = $1 AND to_email = $2`, campaign, email).Scan(&task)
		})
		tok := tracking.Token{Kind: kind, OrganizationID: r.org, TaskID: task}
		if kind == tracking.KindClick {
			tok.URL = "https://example.com/pricing"
		}
		s, err := signer.Sign(tok)
		require.NoError(t, err)
		return s
	}
	const browser = "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"
	late := r.clock.Add(time.Hour)
	require.Equal(t, http.StatusOK, r.fetch(t, late, "/t/o/"+token(opened, "proxied@example.net", tracking.KindOpen), browser+" GoogleImageProxy"))
	require.Equal(t, http.StatusOK, r.fetch(t, late, "/t/o/"+token(opened, "reader@example.net", tracking.KindOpen), browser))
	require.Equal(t, http.StatusFound, r.fetch(t, late, "/t/c/"+token(clicked, "scanned@example.net", tracking.KindClick), ""))
	require.Equal(t, http.StatusFound, r.fetch(t, late, "/t/c/"+token(clicked, "clicker@example.net", tracking.KindClick), browser))
	require.NoError(t, r.env.Tracking.Flush(context.Background()))
	// The human click's effects are due after the burst window; apply them as the worker would then.
	clicks := tracking.NewClicks(r.env.DB.Pool, events.NewOutbox(r.jobs), signer)
	var pending []uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM tracking_events WHERE effects_due_at IS NOT NULL`)
		if err != nil {
			return err
		}
		pending, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
		return err
	})
	require.Len(t, pending, 1, "only the person's click has effects")
	wait, err := clicks.Apply(context.Background(), r.org, pending[0], late.Add(time.Minute))
	require.NoError(t, err)
	require.Zero(t, wait)

	r.advance(24*time.Hour + time.Minute)
	require.Equal(t, 2, r.run(t).Sends, "step two goes to the leads a person opened and clicked, not to those machines did")
	r.work(t)
	require.Equal(t, map[string][]string{
		"proxied@example.net": {"one"}, "reader@example.net": {"one", "two"},
		"scanned@example.net": {"one"}, "clicker@example.net": {"one", "two"},
	}, r.stepsReceived())
	require.Equal(t, engine.ReasonConditionSkip, r.lead(t, opened, "proxied@example.net").WaitReason)
	require.Equal(t, engine.ReasonConditionSkip, r.lead(t, clicked, "scanned@example.net").WaitReason)
}

package engine_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

// unsubRig is a rig whose engine signs with the test server's secret, so the unsubscribe links it sends
// are honoured by the server's /u endpoints, on the shared tracking host t.outflow.test.
type unsubRig struct {
	*rig
	signer *tracking.Signer
}

func newUnsubRig(t *testing.T) *unsubRig {
	t.Helper()
	r := newRig(t)
	signer, err := tracking.NewSigner(r.env.Config.SecretKey)
	require.NoError(t, err)
	r.eng = engine.New(r.env.DB.Pool, engine.Options{AuthGrace: 72 * time.Hour, Now: r.now,
		Tracking: engine.Tracking{Signer: signer, Host: "t.outflow.test", PublicURL: "http://api.outflow.test"}})
	r.pipe.OnSettle(r.eng.Settle)
	return &unsubRig{rig: r, signer: signer}
}

// sentTo is the raw message the SMTP server received for address (the newest one).
func (r *unsubRig) sentTo(t *testing.T, address string) []byte {
	t.Helper()
	var raw []byte
	for _, m := range r.smtp.Messages() {
		if m.To[0] == address {
			raw = m.Data
		}
	}
	require.NotNil(t, raw, "nothing was sent to %s", address)
	return raw
}

// taskOf is the id of the newest send task to address.
func (r *unsubRig) taskOf(t *testing.T, address string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	r.query(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT id FROM send_tasks WHERE to_email = $1 ORDER BY id DESC LIMIT 1`, address).Scan(&id)
	})
	return id
}

var listUnsubscribeRE = regexp.MustCompile(`^<https://t\.outflow\.test/u/([A-Za-z0-9_-]+)>, <mailto:ada@example\.com\?subject=unsubscribe>$`)

func TestACampaignMessageCarriesOneClickListUnsubscribeHeadersUnlessTheCampaignTurnsThemOff(t *testing.T) {
	r := newUnsubRig(t)
	r.campaign(t, twoSteps(), "on@example.net")
	off := r.create(t, twoSteps())
	r.exec(t, `UPDATE campaigns SET unsubscribe_header = false WHERE id = $1`, off)
	r.addLeads(t, off, "off@example.net")
	r.start(t, off)
	require.Equal(t, 2, r.run(t).Sends)
	require.Equal(t, 2, r.work(t))

	raw := r.sentTo(t, "on@example.net")
	m := listUnsubscribeRE.FindStringSubmatch(header(t, raw, "List-Unsubscribe"))
	require.NotNil(t, m, "List-Unsubscribe names the https page on the tracking host and a mailto of the sending address: %q",
		header(t, raw, "List-Unsubscribe"))
	tok, err := r.signer.Parse(m[1], tracking.KindUnsubscribe)
	require.NoError(t, err)
	require.Equal(t, tracking.Token{Kind: tracking.KindUnsubscribe, OrganizationID: r.org, TaskID: r.taskOf(t, "on@example.net")}, tok,
		"the token names the send task the message went out as")
	require.Equal(t, "List-Unsubscribe=One-Click", header(t, raw, "List-Unsubscribe-Post"))

	raw = r.sentTo(t, "off@example.net")
	require.Empty(t, header(t, raw, "List-Unsubscribe"), "unsubscribe_header false sends no List-Unsubscribe")
	require.Empty(t, header(t, raw, "List-Unsubscribe-Post"))
	plain, html := bodies(t, raw)
	require.NotContains(t, plain+html, "/u/", "the default unsubscribe line (mode off) adds nothing to the bodies")
}

func TestTheUnsubscribeLineInLinkModePointsAtTheSamePageAsTheHeader(t *testing.T) {
	r := newUnsubRig(t)
	id := r.create(t, twoSteps())
	require.NoError(t, r.c.CampaignsUpdateAdvanced(context.Background(), &api.CampaignAdvancedUpdate{Settings: api.AdvancedOutreachSettings{
		Unsubscribe: api.NewOptAdvancedOutreachSettingsUnsubscribe(api.AdvancedOutreachSettingsUnsubscribe{
			Mode:     api.NewOptAdvancedOutreachSettingsUnsubscribeMode(api.AdvancedOutreachSettingsUnsubscribeModeLink),
			LinkText: api.NewOptString("Stop these emails")})}}, api.CampaignsUpdateAdvancedParams{ID: id}))
	r.addLeads(t, id, "line@example.net")
	r.start(t, id)
	require.Equal(t, 1, r.run(t).Sends)
	require.Equal(t, 1, r.work(t))

	raw := r.sentTo(t, "line@example.net")
	m := listUnsubscribeRE.FindStringSubmatch(header(t, raw, "List-Unsubscribe"))
	require.NotNil(t, m, header(t, raw, "List-Unsubscribe"))
	page := "https://t.outflow.test/u/" + m[1]
	plain, _ := bodies(t, raw)
	require.Contains(t, plain, "Stop these emails: "+page, "the plain line spells out the header's page")
}

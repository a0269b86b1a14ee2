package handlers_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/agents/approvals"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
	"github.com/outflowhq/outflow/jobs"
)

// BenchmarkDirectSendPolicyGate measures what the agent policy gate adds to a direct send (POST
// /v1/emails/{id}/send over loopback HTTP through the generated server and the handler, queued in one
// transaction): an API key under a permissive policy (the policy read and the usage upsert) against the
// same send by a signed-in person, whom the gate lets through without a query. Both callers are trusted by
// the same security handler, so authentication costs the same on both sides and the ratio is the gate's.
func BenchmarkDirectSendPolicyGate(b *testing.B) {
	env := apitest.New(b, apitest.MailPeers(mailtest.CAFile(b)))
	boot := env.Bootstrap(b, "acme")
	ctx := context.Background()
	key := env.Client(b, boot.APIKey)
	smtp, imap := mailtest.NewSMTPServer(b, rigUser, rigSMTPPass), mailtest.NewIMAPServer(b, rigUser, rigIMAPPass)
	box, err := key.MailboxesCreate(ctx, &api.CreateEmailAccount{Provider: api.CreateEmailAccountProviderSMTPImap, Email: rigUser, Name: "Ada",
		SMTP: api.NewOptMailService(apitest.MailService(b, smtp.Addr, rigUser, rigSMTPPass)),
		Imap: api.NewOptMailService(apitest.MailService(b, imap.Addr, rigUser, rigIMAPPass))}, api.MailboxesCreateParams{})
	if err != nil {
		b.Fatal(err)
	}
	session, err := env.Client(b, env.SignIn(b, "owner@acme.example", apitest.Password).AccessToken).AgentPoliciesCreate(ctx, &api.AgentPolicy{
		Name: "bench", APIKeyID: api.NewOptUUID(boot.APIKeyID), Capabilities: []api.AgentPolicyCapabilitiesItem{api.AgentPolicyCapabilitiesItemEmailCompose},
		MailboxIds: []uuid.UUID{box.ID}, MaxRecipientsPerRun: 50, MaxRecipientsPerDay: 1 << 30, MaxActionsPerDay: 1 << 30,
		ExpiresAt: time.Now().Add(24 * time.Hour)})
	if err != nil || session.ID.Value == uuid.Nil {
		b.Fatal(err)
	}

	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	inserter, err := jobs.NewClient(jobs.Deps{Pool: env.DB.Pool, Logger: logger}, jobs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	keyring, err := seal.NewKeyring(env.Config.SecretKey)
	if err != nil {
		b.Fatal(err)
	}
	outbox := events.NewOutbox(inserter)
	mailboxes := handlers.NewMailboxes(env.DB.Pool, keyring, outbox, inserter,
		handlers.MailboxOptions{Approvals: approvals.New(env.DB.Pool, outbox, env.Config.AppURL)})
	serve := func(p *auth.Principal) *api.Client {
		h := handlers.New(handlers.Deps{Logger: logger, Mailboxes: mailboxes})
		srv, err := api.NewServer(h, h, fixedCaller{p: p}, api.WithPathPrefix("/v1"))
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		b.Cleanup(hs.Close)
		c, err := api.NewClient(hs.URL+"/v1", tokenSource("trusted"), api.WithClient(hs.Client()))
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	person := serve(&auth.Principal{Kind: auth.KindSession, CredentialID: uuid.New(), OrganizationID: boot.OrganizationID, UserID: boot.UserID,
		Role: auth.RoleOwner, OrgPermissions: auth.AllOrgPermissions})
	agent := serve(&auth.Principal{Kind: auth.KindAPIKey, CredentialID: boot.APIKeyID, OrganizationID: boot.OrganizationID, UserID: boot.UserID,
		Permissions: auth.FullAccess})

	req := &api.MailboxSendRequest{To: []string{"carol@client.example"}, Cc: []string{"dan@client.example"}, Subject: "Hello",
		BodyPlain: api.NewOptString("Hello there."), SendMode: api.NewOptMailboxSendRequestSendMode(api.MailboxSendRequestSendModeSmart)}
	send := func(b *testing.B, c *api.Client) {
		b.Helper()
		res, err := c.MailboxesSend(ctx, req, api.MailboxesSendParams{ID: box.ID})
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := res.(*api.MailboxesSendOK); !ok {
			b.Fatalf("the send was not executed: %+v", res)
		}
	}
	run := func(b *testing.B, c *api.Client) {
		n := 0
		for b.Loop() {
			send(b, c)
			if n++; n%200 == 0 { // stay clear of the pending-send bound, outside the measurement
				b.StopTimer()
				orgExec(b, env, boot.OrganizationID, `UPDATE send_tasks SET status = 'canceled' WHERE status = 'queued'`)
				b.StartTimer()
			}
		}
		orgExec(b, env, boot.OrganizationID, `UPDATE send_tasks SET status = 'canceled' WHERE status = 'queued'`)
	}
	send(b, person) // warm both paths: connections, prepared statements
	send(b, agent)
	b.Run("baseline", func(b *testing.B) { run(b, person) })
	b.Run("outflow", func(b *testing.B) { run(b, agent) })
}

package mailsync_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
	"github.com/outflowhq/outflow/jobs"
)

const (
	user = "ada@example.com"
	pass = "secret-pass-1"
)

// rig is an organization with one connected mailbox whose IMAP server runs in process.
type rig struct {
	env    *apitest.Env
	org    uuid.UUID
	c      *api.Client
	imap   *mailtest.IMAPServer
	box    uuid.UUID
	outbox *events.Outbox
}

func newRig(t *testing.T, opts ...mailtest.Option) *rig {
	t.Helper()
	srv := mailtest.NewIMAPServer(t, user, pass, opts...)
	return newRigAt(t, srv, service(t, srv.Addr))
}

// newRigAt is newRig with the IMAP server srv, which the mailbox reaches as imapService says.
func newRigAt(t *testing.T, srv *mailtest.IMAPServer, imapService api.MailService) *rig {
	t.Helper()
	env := apitest.New(t, apitest.MailPeers(mailtest.CAFile(t)))
	boot := env.Bootstrap(t, "acme")
	r := &rig{env: env, org: boot.OrganizationID, c: env.Client(t, boot.APIKey), imap: srv}
	smtpSrv := mailtest.NewSMTPServer(t, user, pass)
	box, err := r.c.MailboxesCreate(context.Background(), &api.CreateEmailAccount{Provider: api.CreateEmailAccountProviderSMTPImap,
		Email: user, Name: "Ada", SMTP: api.NewOptMailService(service(t, smtpSrv.Addr)), Imap: api.NewOptMailService(imapService)},
		api.MailboxesCreateParams{})
	require.NoError(t, err)
	r.box = box.ID
	inserter, err := jobs.NewClient(jobs.Deps{Pool: env.DB.Pool, Logger: slog.New(slog.DiscardHandler)}, jobs.Options{})
	require.NoError(t, err)
	r.outbox = events.NewOutbox(inserter)
	return r
}

func service(t *testing.T, addr string) api.MailService {
	return apitest.MailService(t, addr, user, pass)
}

// syncer is one worker process's syncer.
func (r *rig) syncer(t *testing.T, ttl time.Duration) *mailsync.Syncer {
	t.Helper()
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	s := mailsync.NewSyncer(r.env.DB.Pool, &mailbox.Credentials{Keyring: keyring, Pool: r.env.DB.Pool}, mailbox.Dialer{TLS: mailtest.ClientTLS(), AllowInsecure: true, Timeout: 5 * time.Second},
		slog.New(slog.DiscardHandler))
	s.LeaseTTL = ttl
	return s
}

// start runs a syncer in the background until the test ends (or stop is called) and returns its result.
func (r *rig) start(t *testing.T, s *mailsync.Syncer) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, r.outbox, r.org, r.box) }()
	var err error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			err = <-done
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func (r *rig) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, sql, args...).Scan(&n)
	}))
	return n
}

func (r *rig) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql, args...)
		return err
	}))
}

func message(id, inReplyTo, refs, subject, body string) []byte {
	h := fmt.Sprintf("From: Bob <bob@client.example>\r\nTo: ada@example.com\r\nSubject: %s\r\nMessage-ID: %s\r\nDate: %s\r\n",
		subject, id, time.Now().Format(time.RFC1123Z))
	if inReplyTo != "" {
		h += "In-Reply-To: " + inReplyTo + "\r\nReferences: " + refs + "\r\n"
	}
	return []byte(h + "Content-Type: text/plain; charset=utf-8\r\n\r\n" + body + "\r\n")
}

func (r *rig) backfilled(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		st, err := r.c.MailboxesSyncState(context.Background(), api.MailboxesSyncStateParams{ID: r.box})
		require.NoError(t, err)
		return !st.State.Null && st.State.Value.BackfillStatus == api.MailboxSyncStateBackfillStatusComplete
	}, 90*time.Second, 20*time.Millisecond)
}

func TestSyncBackfillsAThousandMessagesIntoThreadsThenIdles(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	st, err := r.c.MailboxesSyncState(ctx, api.MailboxesSyncStateParams{ID: r.box})
	require.NoError(t, err)
	require.True(t, st.State.Null, "no state before the first sync")
	require.Equal(t, 30, st.Policy.BackfillDays)

	// 250 conversations of four messages: the lead's first mail, our reply (in Sent, stored after INBOX),
	// their answer, and a follow-up whose only link is References.
	for i := range 250 {
		root := fmt.Sprintf("<root%d@client.example>", i)
		reply := fmt.Sprintf("<reply%d@example.com>", i)
		answer := fmt.Sprintf("<answer%d@client.example>", i)
		r.imap.Append(t, "INBOX", message(root, "", "", fmt.Sprintf("Question %d", i), "Hello"), imap.FlagSeen)
		r.imap.Append(t, "Sent", message(reply, root, root, fmt.Sprintf("Re: Question %d", i), "Hi back"))
		r.imap.Append(t, "INBOX", message(answer, reply, root+" "+reply, fmt.Sprintf("Re: Question %d", i), "Thanks"))
		r.imap.Append(t, "INBOX", message(fmt.Sprintf("<later%d@client.example>", i), "", "", fmt.Sprintf("Re: Question %d", i), "x"))
	}
	stop := r.start(t, r.syncer(t, 30*time.Second))
	r.backfilled(t)

	require.Equal(t, 1000, r.count(t, `SELECT count(*) FROM inbox_messages WHERE mailbox_id = $1`, r.box))
	require.Equal(t, 250, r.count(t, `SELECT count(*) FROM inbox_messages WHERE mailbox_id = $1 AND folder_role = 'sent'`, r.box))
	// Each conversation of three linked messages is one thread (the unlinked follow-ups are threads of their own).
	require.Equal(t, 500, r.count(t, `SELECT count(*) FROM inbox_threads WHERE mailbox_id = $1`, r.box))
	require.Equal(t, 250, r.count(t, `SELECT count(*) FROM inbox_threads WHERE mailbox_id = $1 AND message_count = 3`, r.box))
	require.Equal(t, 1, r.count(t, `SELECT count(DISTINCT thread_id) FROM inbox_messages WHERE message_id IN ('<root7@client.example>', '<reply7@example.com>', '<answer7@client.example>')`))
	require.Equal(t, 250, r.count(t, `SELECT count(*) FROM inbox_messages WHERE mailbox_id = $1 AND seen`, r.box))
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<answer3@client.example>' AND body_text LIKE 'Thanks%' AND from_email = 'bob@client.example' AND in_reply_to = '<reply3@example.com>'`))
	st, err = r.c.MailboxesSyncState(ctx, api.MailboxesSyncStateParams{ID: r.box})
	require.NoError(t, err)
	require.Equal(t, 1000, st.State.Value.BackfillSynced)
	require.True(t, st.State.Value.LastSyncedAt.Set)
	m, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: r.box})
	require.NoError(t, err)
	require.False(t, m.LastSyncedAt.Null)

	// IDLE: a new message is stored as the server announces it (the rig's server has IDLE, so no poll, which
	// would wait a minute, is involved; the bound only keeps a broken sync from hanging the test).
	r.imap.Append(t, "INBOX", message("<fresh@client.example>", "<answer9@client.example>", "<root9@client.example> <answer9@client.example>", "Re: Question 9", "More"))
	if !assert.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<fresh@client.example>'`) == 1
	}, 30*time.Second, 10*time.Millisecond) {
		t.Fatalf("not stored; stopping the sync returned %v", stop())
	}
	require.Equal(t, 4, r.count(t, `SELECT message_count FROM inbox_threads WHERE id = (SELECT thread_id FROM inbox_messages WHERE message_id = '<root9@client.example>')`))
	require.NoError(t, stop())
	require.Equal(t, 0, r.count(t, `SELECT count(*) FROM mailbox_sync WHERE lease_owner IS NOT NULL`), "a clean stop hands the lease back")

	// A new UIDVALIDITY drops the stored generation and fetches the folder again, with nothing doubled.
	r.exec(t, `UPDATE mailbox_folders SET uid_validity = uid_validity + 1 WHERE name = 'INBOX'`)
	r.exec(t, `UPDATE inbox_messages SET uid_validity = uid_validity + 1 WHERE folder = 'INBOX'`)
	r.start(t, r.syncer(t, 30*time.Second))
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM inbox_messages WHERE folder = 'INBOX'`) == 751 &&
			r.count(t, `SELECT count(*) FROM inbox_messages WHERE folder = 'INBOX' AND uid_validity = (SELECT uid_validity FROM mailbox_folders WHERE name = 'INBOX')`) == 751
	}, 20*time.Second, 20*time.Millisecond, "inbox %d, current %d, threads %d", r.count(t, `SELECT count(*) FROM inbox_messages WHERE folder = 'INBOX'`),
		r.count(t, `SELECT count(*) FROM inbox_messages WHERE folder = 'INBOX' AND uid_validity = (SELECT uid_validity FROM mailbox_folders WHERE name = 'INBOX')`),
		r.count(t, `SELECT count(*) FROM inbox_threads`))
	r.summariesAgree(t)
}

func TestOneProcessSyncsAMailboxAndADeadOnesLeaseIsTakenOver(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.imap.Append(t, "INBOX", message("<one@client.example>", "", "", "One", "x"))

	// A live holder keeps renewing: a second process is turned away for as long as the first runs.
	first := r.syncer(t, 3*time.Second)
	stopFirst := r.start(t, first)
	r.backfilled(t)
	second := r.syncer(t, 3*time.Second)
	require.ErrorIs(t, second.Run(context.Background(), r.outbox, r.org, r.box), mailsync.ErrLeaseHeld)
	time.Sleep(3500 * time.Millisecond) // longer than the lease: only renewals keep it
	require.ErrorIs(t, second.Run(context.Background(), r.outbox, r.org, r.box), mailsync.ErrLeaseHeld)
	require.NoError(t, stopFirst())

	// A process that dies holding the lease (no release) loses it once it runs out.
	dead := uuid.New()
	r.exec(t, `UPDATE mailbox_sync SET lease_owner = $1, lease_until = now() + interval '1 second' WHERE mailbox_id = $2`, dead, r.box)
	require.ErrorIs(t, second.Run(context.Background(), r.outbox, r.org, r.box), mailsync.ErrLeaseHeld)
	time.Sleep(1100 * time.Millisecond)
	r.start(t, second)
	r.imap.Append(t, "INBOX", message("<two@client.example>", "", "", "Two", "y"))
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<two@client.example>'`) == 1
	}, 5*time.Second, 20*time.Millisecond)
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM mailbox_sync WHERE lease_owner = $1`, second.Owner), "the second process holds it now")
}

func TestTheWorkersSyncEveryActiveMailbox(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.imap.Append(t, "INBOX", message("<w@client.example>", "", "", "Hello", "x"))
	r.env.StartWorkers(t)
	r.backfilled(t)
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<w@client.example>'`))
	require.Contains(t, eventTypes(t, r), "email_account.synced")
}

func eventTypes(t *testing.T, r *rig) []string {
	t.Helper()
	var out []string
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT event_type FROM event_outbox`)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return out
}

func TestARefusedLoginIsLoggedOnceAndResolvedWhenItWorksAgain(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	r.exec(t, `UPDATE mailboxes SET imap_password = $2 WHERE id = $1`, r.box, mailbox.SealPassword(keyring, r.org, r.box, mailbox.ServiceIMAP, "changed-elsewhere"))
	s := r.syncer(t, 30*time.Second)
	for range 2 {
		var ce *mailbox.CheckError
		require.ErrorAs(t, s.Run(context.Background(), r.outbox, r.org, r.box), &ce)
		require.Equal(t, mailbox.KindAuth, ce.Kind)
	}
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM mailbox_errors WHERE code = 'EMAIL_AUTH_ERROR' AND resolved_at IS NULL`), "one open entry, not one per retry")
	require.Contains(t, eventTypes(t, r), "email_account.error")
	st, err := r.c.MailboxesSyncState(context.Background(), api.MailboxesSyncStateParams{ID: r.box})
	require.NoError(t, err)
	require.False(t, st.State.Null)

	r.exec(t, `UPDATE mailboxes SET imap_password = $2 WHERE id = $1`, r.box, mailbox.SealPassword(keyring, r.org, r.box, mailbox.ServiceIMAP, pass))
	r.start(t, s)
	r.backfilled(t)
	require.Equal(t, 0, r.count(t, `SELECT count(*) FROM mailbox_errors WHERE resolved_at IS NULL`))
	d, err := r.c.MailboxesGet(context.Background(), api.MailboxesGetParams{ID: r.box})
	require.NoError(t, err)
	require.Len(t, d.RecentErrors, 1)
	require.False(t, d.RecentErrors[0].ResolvedAt.Null, "the entry stays in the log, resolved")
}

// peer is another client of the test's IMAP server, as a person's mail app would be.
func (r *rig) peer(t *testing.T) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialStartTLS(r.imap.Addr, &imapclient.Options{TLSConfig: mailtest.ClientTLS()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Login(user, pass).Wait())
	_, err = c.Select("INBOX", nil).Wait()
	require.NoError(t, err)
	return c
}

func flagsOf(t *testing.T, c *imapclient.Client, uid imap.UID) []imap.Flag {
	t.Helper()
	msgs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, Flags: true}).Collect()
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	return msgs[0].Flags
}

func TestFlagsFollowTheServerAndReadChangesRelayBack(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	first := r.imap.Append(t, "INBOX", message("<first@client.example>", "", "", "First", "x"), imap.FlagSeen)
	second := r.imap.Append(t, "INBOX", message("<second@client.example>", "", "", "Second", "y"))
	s := r.syncer(t, 30*time.Second)
	s.PollInterval = time.Second // the periodic pass heals a change whose report came between two commands
	r.start(t, s)
	r.backfilled(t)
	require.Equal(t, 1, r.count(t, `SELECT count(*) FROM inbox_messages WHERE seen`))

	// Read and flagged in another mail app: the stored flags follow while the sync idles.
	peer := r.peer(t)
	require.NoError(t, peer.Store(imap.UIDSetNum(second), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true,
		Flags: []imap.Flag{imap.FlagSeen, imap.FlagFlagged}}, nil).Close())
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<second@client.example>' AND seen AND '\Flagged' = ANY (flags)`) == 1
	}, 3*time.Second, 20*time.Millisecond)

	// Marked unread here: stored at once, relayed to the server by a job.
	jobs := r.env.StartWorkers(t)
	var id uuid.UUID
	require.NoError(t, db.WithOrgTx(context.Background(), r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT id FROM inbox_messages WHERE message_id = '<first@client.example>'`).Scan(&id); err != nil {
			return err
		}
		n, err := mailsync.MarkSeen(ctx, tx, jobs, r.org, r.box, []uuid.UUID{id, uuid.New()}, false)
		require.Equal(t, 1, n, "an unknown id changes nothing")
		return err
	}))
	require.Equal(t, 0, r.count(t, `SELECT count(*) FROM inbox_messages WHERE id = $1 AND (seen OR '\Seen' = ANY (flags))`, id))
	require.Eventually(t, func() bool {
		return !slices.Contains(flagsOf(t, peer, first), imap.FlagSeen)
	}, 5*time.Second, 20*time.Millisecond)
	require.Contains(t, flagsOf(t, peer, second), imap.FlagSeen, "other messages keep their flags")
}

// With CONDSTORE offered, a pass re-reads only the flags changed since the HIGHESTMODSEQ it stored, and none
// while that has not moved. The proxy reports only the changes it is told of, so a change made on the server
// behind its back shows whether a pass re-read more than CONDSTORE said.
func TestWithCondStoreAPassRereadsOnlyTheFlagsChangedSinceItsModSeq(t *testing.T) {
	t.Parallel()
	srv := mailtest.NewIMAPServer(t, user, pass, mailtest.NoTLS())
	proxy := mailtest.NewCondStoreProxy(t, srv.Addr, 10)
	viaProxy := service(t, proxy.Addr)
	viaProxy.Security = api.NewOptMailServiceSecurity(api.MailServiceSecurityNone)
	r := newRigAt(t, srv, viaProxy)
	first := srv.Append(t, "INBOX", message("<first@client.example>", "", "", "First", "x"))
	second := srv.Append(t, "INBOX", message("<second@client.example>", "", "", "Second", "y"))
	s := r.syncer(t, 30*time.Second)
	s.PollInterval = 200 * time.Millisecond
	r.start(t, s)
	r.backfilled(t)
	require.Equal(t, 10, r.count(t, `SELECT highest_modseq FROM mailbox_folders WHERE name = 'INBOX'`))
	selects := func() int {
		n := 0
		for _, c := range proxy.Commands() {
			if strings.Contains(c, "SELECT") && strings.Contains(c, "INBOX") {
				n++
			}
		}
		return n
	}
	flagReads := func() (plain, since []string) {
		for _, c := range proxy.Commands() {
			if strings.Contains(c, "FETCH") && strings.Contains(c, "FLAGS") && !strings.Contains(c, "BODY") {
				if strings.Contains(c, "CHANGEDSINCE") {
					since = append(since, c)
				} else {
					plain = append(plain, c)
				}
			}
		}
		return plain, since
	}
	passes := selects()
	require.Eventually(t, func() bool { return selects() >= passes+2 }, 5*time.Second, 20*time.Millisecond)
	plain, since := flagReads()
	require.Empty(t, plain, "with CONDSTORE no pass re-reads a window of flags")
	require.Empty(t, since, "nothing changed: no pass reads flags at all")

	peer, err := imapclient.DialInsecure(srv.Addr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = peer.Close() })
	require.NoError(t, peer.Login(user, pass).Wait())
	_, err = peer.Select("INBOX", nil).Wait()
	require.NoError(t, err)
	for _, uid := range []imap.UID{first, second} {
		require.NoError(t, peer.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true,
			Flags: []imap.Flag{imap.FlagFlagged}}, nil).Close())
	}
	proxy.Change(second) // CONDSTORE reports the second message's change only
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<second@client.example>' AND '\Flagged' = ANY (flags)`) == 1
	}, 5*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		return r.count(t, `SELECT highest_modseq FROM mailbox_folders WHERE name = 'INBOX'`) == 11
	}, 5*time.Second, 20*time.Millisecond, "the new HIGHESTMODSEQ is stored")
	passes = selects()
	require.Eventually(t, func() bool { return selects() >= passes+2 }, 5*time.Second, 20*time.Millisecond)
	require.Zero(t, r.count(t, `SELECT count(*) FROM inbox_messages WHERE message_id = '<first@client.example>' AND '\Flagged' = ANY (flags)`),
		"a change CONDSTORE did not report is not re-read")
	plain, since = flagReads()
	require.Empty(t, plain)
	require.Len(t, since, 1, "one read, when HIGHESTMODSEQ moved")
	require.Contains(t, since[0], "(CHANGEDSINCE 10)")
}

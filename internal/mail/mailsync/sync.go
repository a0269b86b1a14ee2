package mailsync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Policy bounds what a sync takes in.
type Policy struct {
	// BackfillDays is how far back the first sync of a folder reaches.
	BackfillDays int
	// BackfillMessages is the most messages the first sync of a folder takes (the newest).
	BackfillMessages int
	// DailyMessages and OrgDailyMessages are the daily intake caps of one mailbox and of an organization.
	DailyMessages, OrgDailyMessages int
}

// DefaultPolicy is the policy of a deployment that sets none.
var DefaultPolicy = Policy{BackfillDays: 30, BackfillMessages: 5000, DailyMessages: 10000, OrgDailyMessages: 200000}

// ErrLeaseHeld means another live process syncs the mailbox.
var ErrLeaseHeld = errors.New("mailsync: another process holds the mailbox's sync")

// Syncer syncs mailboxes; one per process, its Owner naming the process in leases.
type Syncer struct {
	Pool *pgxpool.Pool
	// Credentials opens the mailbox's login (and refreshes OAuth access tokens).
	Credentials *mailbox.Credentials
	Dialer      mailbox.Dialer
	Logger      *slog.Logger
	Policy      Policy
	// Owner identifies this process's leases.
	Owner uuid.UUID
	// LeaseTTL is how long a lease lasts unrenewed; Heartbeat how often it is renewed (a third of it).
	LeaseTTL time.Duration
	// PollInterval is how often INBOX is checked on a server without IDLE.
	PollInterval time.Duration
	// inbound is told every new inbound message (see OnInbound); nil tells no one.
	inbound InboundHook
}

// NewSyncer builds a process's syncer with a fresh owner id and the default timings.
func NewSyncer(pool *pgxpool.Pool, creds *mailbox.Credentials, dialer mailbox.Dialer, logger *slog.Logger) *Syncer {
	return &Syncer{Pool: pool, Credentials: creds, Dialer: dialer, Logger: logger, Policy: DefaultPolicy, Owner: uuid.New(),
		LeaseTTL: 30 * time.Second, PollInterval: time.Minute}
}

// fetchBatch is how many messages one FETCH (and one store transaction) takes.
const fetchBatch = 100

// Run syncs one mailbox until ctx ends (or the lease is lost, or the mailbox cannot be synced): backfill, then
// INBOX live. It answers ErrLeaseHeld at once when another live process holds the mailbox.
func (s *Syncer) Run(ctx context.Context, outbox *events.Outbox, org, id uuid.UUID) error {
	if err := s.take(ctx, org, id); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go s.heartbeat(ctx, cancel, org, id)
	defer func() {
		_ = db.WithOrgTx(context.WithoutCancel(ctx), s.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
			return queries.SyncLeaseRelease(ctx, tx, dbq.SyncLeaseReleaseParams{OrganizationID: org, MailboxID: id, Owner: uuid.NullUUID{UUID: s.Owner, Valid: true}})
		})
	}()
	err := s.run(ctx, outbox, org, id)
	if cause := context.Cause(ctx); errors.Is(cause, ErrLeaseHeld) {
		return cause
	}
	if err != nil && ctx.Err() == nil {
		_ = db.WithOrgTx(context.WithoutCancel(ctx), s.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
			return queries.SyncError(ctx, tx, dbq.SyncErrorParams{OrganizationID: org, MailboxID: id, LastError: clip(err.Error(), 1000)})
		})
		return err
	}
	return nil
}

// take takes or renews the lease.
func (s *Syncer) take(ctx context.Context, org, id uuid.UUID) error {
	return db.WithOrgTx(ctx, s.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		until := time.Now().Add(s.LeaseTTL)
		_, err := queries.SyncLeaseTake(ctx, tx, dbq.SyncLeaseTakeParams{OrganizationID: org, MailboxID: id, Owner: uuid.NullUUID{UUID: s.Owner, Valid: true}, Until: &until})
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrLeaseHeld
		}
		return err
	})
}

// heartbeat renews the lease every third of its life; when a renewal is refused (another process took over
// after a stall) or keeps failing, the run is stopped.
func (s *Syncer) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, org, id uuid.UUID) {
	t := time.NewTicker(s.LeaseTTL / 3)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := s.take(ctx, org, id)
		switch {
		case errors.Is(err, ErrLeaseHeld):
			cancel(ErrLeaseHeld)
			return
		case err != nil && ctx.Err() == nil:
			if failures++; failures >= 2 {
				cancel(fmt.Errorf("mailsync: lease renewal failed: %w", err))
				return
			}
		default:
			failures = 0
		}
	}
}

func (s *Syncer) run(ctx context.Context, outbox *events.Outbox, org, id uuid.UUID) error {
	var m dbq.Mailbox
	err := db.WithOrgTx(ctx, s.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		m, err = queries.MailboxGet(ctx, tx, dbq.MailboxGetParams{OrganizationID: org, ID: id})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil || m.Status != "active" || m.ImapHost == "" {
		return err
	}
	_, srv, err := s.Credentials.Servers(ctx, outbox, m)
	if errors.Is(err, mailbox.ErrNeedsConsent) {
		return nil // the mailbox is revoked now (with its error entry); nothing syncs until a new consent
	}
	if err != nil {
		return err
	}
	// changed is signalled when the selected folder reports news while idling: new messages, or flags changed
	// by another client.
	changed := make(chan struct{}, 1)
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	c, err := s.Dialer.IMAP(ctx, srv, &imapclient.Options{UnilateralDataHandler: &imapclient.UnilateralDataHandler{
		Mailbox: func(data *imapclient.UnilateralDataMailbox) {
			if data.NumMessages != nil {
				signal()
			}
		},
		Fetch: func(msg *imapclient.FetchMessageData) {
			_, _ = msg.Collect()
			signal()
		},
		Expunge: func(uint32) { signal() },
	}})
	var ce *mailbox.CheckError
	if errors.As(err, &ce) && ce.Kind == mailbox.KindAuth {
		// The provider refuses the login: the account needs attention, whatever the sync does next.
		if rerr := s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
			return mailbox.Raise(ctx, tx, outbox, m, mailbox.ConditionAuthError, ce.Error())
		}); rerr != nil {
			return rerr
		}
	}
	if err != nil {
		return err
	}
	if err := s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
		return mailbox.Resolve(ctx, tx, m, mailbox.ConditionAuthError)
	}); err != nil {
		_ = c.Close()
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	defer func() { _ = c.Close() }()

	folders, err := discover(c)
	if err != nil {
		return err
	}
	since := time.Now().AddDate(0, 0, -s.Policy.BackfillDays)
	if err := s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
		return queries.SyncBackfillStart(ctx, tx, dbq.SyncBackfillStartParams{OrganizationID: org, MailboxID: id, Since: &since})
	}); err != nil {
		return err
	}
	stored := 0
	for _, f := range folders {
		n, err := s.syncFolder(ctx, c, outbox, m, f, since)
		if err != nil {
			return err
		}
		stored += n
	}
	if err := s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := queries.SyncBackfillComplete(ctx, tx, dbq.SyncBackfillCompleteParams{OrganizationID: org, MailboxID: id}); err != nil {
			return err
		}
		return s.synced(ctx, tx, outbox, m, stored)
	}); err != nil {
		return err
	}
	return s.follow(ctx, c, outbox, m, folders[0], since, changed)
}

// follow keeps INBOX current until ctx ends: IDLE when offered, polling every PollInterval otherwise; each
// wake-up fetches what is new and refreshes flags. While idling, a flag change is reported by the server, and
// the periodic IDLE restart makes a pass too (with CONDSTORE one short answer), so a missed report heals.
func (s *Syncer) follow(ctx context.Context, c *imapclient.Client, outbox *events.Outbox, m dbq.Mailbox, inbox folder, since time.Time, changed <-chan struct{}) error {
	idle := c.Caps().Has(imap.CapIdle) || c.Caps().Has(imap.CapIMAP4rev2)
	// The backfill left the last folder selected: select INBOX (taking in what arrived meanwhile) so its
	// updates are the ones the server sends.
	wake := true
	for {
		if wake {
			n, err := s.syncFolder(ctx, c, outbox, m, inbox, since)
			if err != nil {
				return err
			}
			if n > 0 {
				if err := s.tx(ctx, m.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
					return s.synced(ctx, tx, outbox, m, n)
				}); err != nil {
					return err
				}
			}
		}
		var cmd *imapclient.IdleCommand
		if idle {
			var err error
			if cmd, err = c.Idle(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			if cmd != nil {
				_ = cmd.Close()
			}
			return nil
		case <-changed:
			wake = true
		case <-time.After(s.PollInterval):
			// Polling, or an IDLE restarted well within servers' 29-minute limit; either way a pass, so a
			// change whose report was missed is taken in within PollInterval.
			wake = true
		}
		if cmd != nil {
			if err := cmd.Close(); err != nil {
				return err
			}
			if err := cmd.Wait(); err != nil {
				return err
			}
		}
	}
}

// synced stamps the mailbox's last sync and emits email_account.synced (a firehose event) with what was stored.
func (s *Syncer) synced(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m dbq.Mailbox, stored int) error {
	if err := queries.MailboxMarkSynced(ctx, tx, dbq.MailboxMarkSyncedParams{OrganizationID: m.OrganizationID, ID: m.ID}); err != nil {
		return err
	}
	_, err := outbox.Emit(ctx, tx, events.MailboxSynced, map[string]any{"email_account_id": m.ID, "email": m.Email, "stored": stored})
	return err
}

func (s *Syncer) tx(ctx context.Context, org uuid.UUID, fn func(context.Context, pgx.Tx) error) error {
	return db.WithOrgTx(ctx, s.Pool, org, fn)
}

// discover lists the folders to sync: INBOX first, then one folder per other role, found by special-use
// attribute or, failing that, by a usual name.
func discover(c *imapclient.Client) ([]folder, error) {
	list, err := c.List("", "*", nil).Collect()
	if err != nil {
		return nil, err
	}
	out := []folder{{name: "INBOX", role: "inbox"}}
	taken := map[string]bool{"inbox": true}
	for _, pass := range []bool{true, false} { // attributes first, names second
		for _, l := range list {
			if slices.Contains(l.Attrs, imap.MailboxAttrNoSelect) || strings.EqualFold(l.Mailbox, "INBOX") {
				continue
			}
			role := mailbox.FolderRole(l, pass)
			if role == "" || taken[role] {
				continue
			}
			taken[role] = true
			out = append(out, folder{name: l.Mailbox, role: role})
		}
	}
	return out, nil
}

// syncFolder fetches what the folder has beyond its last stored UID (on the first sync: what arrived within
// the backfill window, the newest BackfillMessages at most), in batches each stored in one transaction, then
// brings the flags of the messages stored before up to date (see refreshFlags) and deletes those the server
// no longer has (see expunged).
func (s *Syncer) syncFolder(ctx context.Context, c *imapclient.Client, outbox *events.Outbox, m dbq.Mailbox, f folder, since time.Time) (int, error) {
	org, id := m.OrganizationID, m.ID
	condstore := c.Caps().Has(imap.CapCondStore)
	sel, err := c.Select(f.name, &imap.SelectOptions{CondStore: condstore}).Wait()
	if err != nil {
		return 0, fmt.Errorf("mailsync: select %s: %w", f.name, err)
	}
	f.uidValidity = sel.UIDValidity
	var lastUID int64
	var prevModSeq uint64
	err = s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
		prev, err := queries.SyncFolderGet(ctx, tx, dbq.SyncFolderGetParams{OrganizationID: org, MailboxID: id, Name: f.name})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case prev.UidValidity == int64(sel.UIDValidity):
			lastUID, prevModSeq = prev.LastUid, uint64(prev.HighestModseq)
		default:
			// The server renumbered the folder: the stored generation is gone; start over (no inbox.email_deleted:
			// the folder is stored again).
			threads, err := queries.SyncFolderForget(ctx, tx, dbq.SyncFolderForgetParams{OrganizationID: org, MailboxID: id,
				Folder: f.name, UidValidity: int64(sel.UIDValidity)})
			if err != nil {
				return err
			}
			return refresh(ctx, tx, org, threads, true)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// New messages first, so a message that woke the sync is stored before the flags are re-read; the new
	// HIGHESTMODSEQ is stored only once the flags changed before it are in.
	storedUID := lastUID
	uids, err := s.pending(c, sel, lastUID, since)
	if err != nil {
		return 0, err
	}
	total := 0
	mb := owner{id: id, own: ownAddresses(m)}
	for start := 0; start < len(uids); start += fetchBatch {
		batch := uids[start:min(start+fetchBatch, len(uids))]
		msgs, err := fetch(c, batch, condstore)
		if err != nil {
			return total, err
		}
		high := lastUID
		for _, m := range msgs {
			high = max(high, int64(m.uid))
		}
		var n int
		err = s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			if n, err = store(ctx, tx, org, mb, f, msgs, s.inbound, outbox); err != nil {
				return err
			}
			if err := queries.SyncFolderSave(ctx, tx, dbq.SyncFolderSaveParams{OrganizationID: org, MailboxID: id, Name: f.name,
				Role: f.role, UidValidity: int64(sel.UIDValidity), LastUid: high, HighestModseq: int64(prevModSeq)}); err != nil {
				return err
			}
			return queries.SyncProgress(ctx, tx, dbq.SyncProgressParams{OrganizationID: org, MailboxID: id, Stored: int32(n)})
		})
		if err != nil {
			return total, err
		}
		total += n
		lastUID = high
	}
	if err := s.refreshFlags(ctx, c, outbox, org, id, f, sel, storedUID, prevModSeq); err != nil {
		return total, err
	}
	if err := s.expunged(ctx, c, outbox, org, id, f, sel, storedUID); err != nil {
		return total, err
	}
	return total, s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
		return queries.SyncFolderSave(ctx, tx, dbq.SyncFolderSaveParams{OrganizationID: org, MailboxID: id, Name: f.name,
			Role: f.role, UidValidity: int64(sel.UIDValidity), LastUid: lastUID, HighestModseq: int64(sel.HighestModSeq)})
	})
}

// flagWindow is how many of a folder's newest messages have their flags re-read on each pass when the server
// does not offer CONDSTORE.
const flagWindow = 1000

// refreshFlags brings the flags of messages stored before this pass up to date (read elsewhere, flagged,
// answered): with CONDSTORE only those changed since the stored MODSEQ, without it the newest flagWindow.
// Changed messages get inbox.email_updated and their threads' summaries are refreshed.
func (s *Syncer) refreshFlags(ctx context.Context, c *imapclient.Client, outbox *events.Outbox, org, id uuid.UUID, f folder, sel *imap.SelectData, lastUID int64, prevModSeq uint64) error {
	if lastUID == 0 || sel.NumMessages == 0 {
		return nil
	}
	opts := &imap.FetchOptions{UID: true, Flags: true, ModSeq: c.Caps().Has(imap.CapCondStore)}
	var set imap.NumSet
	if c.Caps().Has(imap.CapCondStore) && prevModSeq > 0 {
		if sel.HighestModSeq <= prevModSeq {
			return nil // nothing changed
		}
		var uids imap.UIDSet
		uids.AddRange(1, imap.UID(lastUID))
		set, opts.ChangedSince = uids, prevModSeq
	} else {
		var seqs imap.SeqSet
		seqs.AddRange(uint32(max(1, int64(sel.NumMessages)-flagWindow+1)), sel.NumMessages)
		set = seqs
	}
	msgs, err := c.Fetch(set, opts).Collect()
	if err != nil {
		return fmt.Errorf("mailsync: fetch flags of %s: %w", f.name, err)
	}
	type change struct {
		UID    int64    `json:"uid"`
		Flags  []string `json:"flags"`
		ModSeq uint64   `json:"mod_seq"`
	}
	changes := make([]change, 0, len(msgs))
	for _, m := range msgs {
		if int64(m.UID) > lastUID || m.UID == 0 {
			continue // stored by this pass, flags and all
		}
		flags := make([]string, len(m.Flags))
		for i, fl := range m.Flags {
			flags[i] = string(fl)
		}
		changes = append(changes, change{UID: int64(m.UID), Flags: flags, ModSeq: m.ModSeq})
	}
	if len(changes) == 0 {
		return nil
	}
	raw, err := json.Marshal(changes)
	if err != nil {
		return err
	}
	return s.tx(ctx, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := queries.InboxMessagesSetFlags(ctx, tx, dbq.InboxMessagesSetFlagsParams{OrganizationID: org, MailboxID: id,
			Folder: f.name, UidValidity: int64(f.uidValidity), Changes: raw})
		if err != nil {
			return err
		}
		msgs := make([]changed, len(rows))
		for i, r := range rows {
			msgs[i] = changed(r)
		}
		return settle(ctx, tx, outbox, org, events.InboxEmailUpdated, msgs, false)
	})
}

// pending lists the UIDs to fetch, oldest first.
func (s *Syncer) pending(c *imapclient.Client, sel *imap.SelectData, lastUID int64, since time.Time) ([]imap.UID, error) {
	if sel.NumMessages == 0 {
		return nil, nil
	}
	criteria := &imap.SearchCriteria{}
	if lastUID == 0 {
		criteria.Since = since
	} else {
		var set imap.UIDSet
		set.AddRange(imap.UID(lastUID+1), 0) // lastUID+1:*
		criteria.UID = []imap.UIDSet{set}
	}
	data, err := c.UIDSearch(criteria, nil).Wait()
	if err != nil {
		return nil, err
	}
	var uids []imap.UID
	for _, u := range data.AllUIDs() {
		if int64(u) > lastUID { // n:* always matches the highest UID, even below n
			uids = append(uids, u)
		}
	}
	slices.Sort(uids)
	if lastUID == 0 && len(uids) > s.Policy.BackfillMessages {
		uids = uids[len(uids)-s.Policy.BackfillMessages:]
	}
	return uids, nil
}

// fetch reads whole messages (without setting \Seen) with their flags, arrival time and size, and their
// MODSEQ when the server has CONDSTORE (modSeq).
func fetch(c *imapclient.Client, uids []imap.UID, modSeq bool) ([]fetched, error) {
	section := &imap.FetchItemBodySection{Peek: true}
	bufs, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, Flags: true, InternalDate: true,
		RFC822Size: true, ModSeq: modSeq, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return nil, err
	}
	out := make([]fetched, 0, len(bufs))
	for _, b := range bufs {
		flags := make([]string, len(b.Flags))
		for i, f := range b.Flags {
			flags[i] = string(f)
		}
		out = append(out, fetched{uid: uint32(b.UID), flags: flags, received: b.InternalDate, size: b.RFC822Size,
			modSeq: b.ModSeq, raw: b.FindBodySection(section)})
	}
	return out, nil
}

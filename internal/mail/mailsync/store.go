package mailsync

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jhillyerd/enmime/v2"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dsn"
)

var queries = dbq.New()

// Bounds of what one stored message keeps.
const (
	maxBody     = 1 << 20
	maxHeader   = 998
	maxRefs     = 100
	maxAddrs    = 100
	maxAddrText = 320
)

// parsed is one fetched message as the store keeps it.
type parsed struct {
	messageID, inReplyTo string
	references           []string
	fromEmail, fromName  string
	to, cc               []string
	subject              string
	text, html           string
	sentAt               *time.Time
	outOfOffice          bool
	report               *dsn.Report
}

// parse reads a raw message. A message enmime cannot read at all is kept with what its headers give.
func parse(raw []byte) parsed {
	var p parsed
	if r, ok := dsn.Parse(raw); ok {
		p.report = &r
	}
	env, err := enmime.ReadEnvelope(bytes.NewReader(raw))
	if err != nil {
		return p
	}
	p.messageID = clip(strings.TrimSpace(env.GetHeader("Message-Id")), maxHeader)
	p.inReplyTo = clip(firstID(env.GetHeader("In-Reply-To")), maxHeader)
	for _, r := range strings.Fields(env.GetHeader("References")) {
		if len(p.references) < maxRefs && strings.HasPrefix(r, "<") {
			p.references = append(p.references, clip(r, maxHeader))
		}
	}
	if from, err := env.AddressList("From"); err == nil && len(from) > 0 {
		p.fromEmail, p.fromName = clip(strings.ToLower(from[0].Address), maxAddrText), clip(from[0].Name, maxAddrText)
	}
	p.to, p.cc = addresses(env, "To"), addresses(env, "Cc")
	p.subject = clip(env.GetHeader("Subject"), maxHeader)
	p.outOfOffice = p.report == nil && outOfOffice(env.GetHeader("Auto-Submitted"), p.subject)
	p.text, p.html = clip(env.Text, maxBody), clip(env.HTML, maxBody)
	if d, err := env.Date(); err == nil {
		p.sentAt = &d
	}
	return p
}

// firstID is the first <id> of a header that may hold several.
func firstID(v string) string {
	for _, f := range strings.Fields(v) {
		if strings.HasPrefix(f, "<") {
			return f
		}
	}
	return strings.TrimSpace(v)
}

func addresses(env *enmime.Envelope, key string) []string {
	list, err := env.AddressList(key)
	if err != nil {
		return []string{}
	}
	out := make([]string, 0, min(len(list), maxAddrs))
	for _, a := range list[:min(len(list), maxAddrs)] {
		out = append(out, clip(strings.ToLower(a.Address), maxAddrText))
	}
	return out
}

// clip bounds s to n bytes without splitting a character, and drops NUL bytes Postgres text cannot hold.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// fetched is one message as fetched from a folder.
type fetched struct {
	uid      uint32
	flags    []string
	received time.Time
	size     int64
	raw      []byte
}

// folder is a synced folder: its name, role and current generation.
type folder struct {
	name, role  string
	uidValidity uint32
}

// store saves a batch of fetched messages of one folder in tx, threading each, and answers how many were new.
// Each new message of a folder other than Sent is told to hook (when set) in the same transaction.
func store(ctx context.Context, tx pgx.Tx, org, mailbox uuid.UUID, f folder, batch []fetched, hook InboundHook, outbox *events.Outbox) (int, error) {
	stored := 0
	for _, m := range batch {
		p := parse(m.raw)
		parents := append([]string{}, p.references...)
		if p.inReplyTo != "" {
			parents = append(parents, p.inReplyTo)
		}
		thread, err := queries.InboxThreadFor(ctx, tx, dbq.InboxThreadForParams{OrganizationID: org, MailboxID: mailbox,
			Parents: parents, MessageID: p.messageID})
		created := false
		if errors.Is(err, pgx.ErrNoRows) {
			if thread, err = uuid.NewV7(); err != nil {
				return stored, err
			}
			created = true
			err = queries.InboxThreadInsert(ctx, tx, dbq.InboxThreadInsertParams{OrganizationID: org, ID: thread, MailboxID: mailbox,
				Subject: p.subject, LastMessageAt: m.received})
		}
		if err != nil {
			return stored, err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return stored, err
		}
		n, err := queries.InboxMessageInsert(ctx, tx, dbq.InboxMessageInsertParams{OrganizationID: org, ID: id, MailboxID: mailbox,
			ThreadID: thread, Folder: f.name, FolderRole: f.role, UidValidity: int64(f.uidValidity), Uid: int64(m.uid),
			MessageID: p.messageID, InReplyTo: p.inReplyTo, ThreadReferences: nonNil(p.references), FromEmail: p.fromEmail,
			FromName: p.fromName, ToList: p.to, CcList: p.cc, Subject: p.subject, BodyText: p.text, BodyHtml: p.html,
			Flags: nonNil(m.flags), Seen: hasFlag(m.flags, `\Seen`), Size: int32(min(m.size, 1<<31-1)), SentAt: p.sentAt,
			ReceivedAt: m.received})
		if err != nil {
			return stored, err
		}
		if n == 0 {
			if created {
				if err := queries.InboxThreadDrop(ctx, tx, dbq.InboxThreadDropParams{OrganizationID: org, ID: thread}); err != nil {
					return stored, err
				}
			}
			continue
		}
		if err := queries.InboxThreadTouch(ctx, tx, dbq.InboxThreadTouchParams{OrganizationID: org, ID: thread, At: m.received}); err != nil {
			return stored, err
		}
		if hook != nil && f.role != "sent" {
			if err := hook(ctx, tx, outbox, Inbound{OrganizationID: org, MailboxID: mailbox, ID: id, MessageID: p.messageID,
				InReplyTo: p.inReplyTo, References: nonNil(p.references), FromEmail: p.fromEmail, Subject: p.subject,
				ReceivedAt: m.received, OutOfOffice: p.outOfOffice, Report: p.report}); err != nil {
				return stored, err
			}
		}
		stored++
	}
	return stored, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func hasFlag(flags []string, f string) bool {
	for _, x := range flags {
		if strings.EqualFold(x, f) {
			return true
		}
	}
	return false
}

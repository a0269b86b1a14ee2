package sending

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// CopyWorker is the River worker of CopyArgs.
type CopyWorker struct {
	river.WorkerDefaults[CopyArgs]
	Pipeline *Pipeline
}

// Timeout bounds one copy: a login, a search and one APPEND.
func (w *CopyWorker) Timeout(*river.Job[CopyArgs]) time.Duration { return time.Minute }

// Work files the copy.
func (w *CopyWorker) Work(ctx context.Context, job *river.Job[CopyArgs]) error {
	return w.Pipeline.FileCopy(ctx, events.NewOutbox(river.ClientFromContext[pgx.Tx](ctx)), job.Args)
}

// FileCopy puts a sent message's copy in its mailbox's Sent folder, once: a copy already there (the server
// filed it, or an earlier try appended it and died before recording so) is not appended again. The first
// look in a mailbox whose habit is unknown learns it: a copy found means the server files its own (no more
// copies are owed), none means the pipeline appends them from now on. The copy is marked \Seen, dated when
// the message went out.
func (p *Pipeline) FileCopy(ctx context.Context, outbox *events.Outbox, a CopyArgs) error {
	t, m, err := p.load(ctx, a.OrganizationID, a.TaskID)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && t.SentCopy != "pending" {
		return nil
	}
	if err != nil {
		return err
	}
	habit := m.SentCopies
	if habit != SentCopiesServer {
		c, folder, err := p.sentFolder(ctx, outbox, m)
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		found, err := mailbox.FindMessageID(c, t.MessageID)
		if err != nil {
			return err
		}
		switch {
		case found && habit == SentCopiesUnknown:
			habit = SentCopiesServer
		case !found:
			if habit == SentCopiesUnknown {
				habit = SentCopiesAppend
			}
			if err := p.appendCopy(ctx, c, folder, t, m); err != nil {
				return err
			}
		}
		_ = c.Logout().Wait()
	}
	return db.WithOrgTx(context.WithoutCancel(ctx), p.pool, a.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := queries.SendTaskCopyFiled(ctx, tx, dbq.SendTaskCopyFiledParams{OrganizationID: a.OrganizationID, ID: t.ID}); err != nil {
			return err
		}
		return p.learn(ctx, tx, m, habit)
	})
}

// appendCopy writes the message as it went out into folder, \Seen, dated when it was sent.
func (p *Pipeline) appendCopy(ctx context.Context, c *imapclient.Client, folder string, t dbq.SendTask, m dbq.Mailbox) error {
	at := p.now()
	if t.SentAt != nil {
		at = *t.SentAt
	}
	msg, err := p.compose(ctx, t, m, at)
	if err != nil {
		return err
	}
	w := c.Append(folder, int64(len(msg)), &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: at})
	if _, err := w.Write(msg); err != nil {
		_ = w.Close()
		return fmt.Errorf("sending: append to %s: %w", folder, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("sending: append to %s: %w", folder, err)
	}
	if _, err := w.Wait(); err != nil {
		return fmt.Errorf("sending: append to %s: %w", folder, err)
	}
	return nil
}

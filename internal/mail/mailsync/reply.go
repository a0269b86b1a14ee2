package mailsync

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// maxReplyReferences is how many Message-IDs a reply's References keeps (the send_tasks CHECK's bound).
const maxReplyReferences = 100

// errThreadNotFound answers a thread id that is malformed, unknown or another organization's alike.
var errThreadNotFound = apierror.NotFound("thread_not_found", "thread_id names no synced thread of this organization.")

// Reply is where a message sent into a synced thread attaches: the Message-ID of the thread's newest message
// and the References chain that message carries (RFC 5322 section 3.6.4).
type Reply struct {
	parent     string
	references []string
}

// ReplyIn reads the thread a message from mailbox is sent into. thread is the id as the client gave it: a
// malformed, unknown or foreign id is a 404 thread_not_found; a thread of another mailbox of the organization
// is a 400 naming that mailbox (a reply leaves from the mailbox the conversation is in, or the recipient's
// client would not thread it); a thread none of whose messages has a Message-ID is a 400 too, since nothing
// could be answered.
func ReplyIn(ctx context.Context, tx pgx.Tx, org, mailbox uuid.UUID, thread string) (Reply, error) {
	id, err := uuid.Parse(thread)
	if err != nil {
		return Reply{}, errThreadNotFound
	}
	row, err := queries.InboxThreadReplyTarget(ctx, tx, dbq.InboxThreadReplyTargetParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Reply{}, errThreadNotFound
	}
	if err != nil {
		return Reply{}, err
	}
	if row.MailboxID != mailbox {
		return Reply{}, apierror.BadRequest("thread_of_another_mailbox", "thread_id names a thread of mailbox "+row.MailboxID.String()+
			", not of this one; a reply leaves from the mailbox the conversation is in.").
			WithFix("Send it with POST /emails/" + row.MailboxID.String() + "/send.")
	}
	if row.MessageID == "" {
		return Reply{}, apierror.BadRequest("thread_not_replyable", "No message of this thread carries a Message-ID, so a reply cannot be threaded to it.").
			WithFix("Send without thread_id, or name the Message-IDs to answer in in_reply_to.")
	}
	refs := row.ThreadReferences
	if len(refs) == 0 && row.InReplyTo != "" {
		refs = []string{row.InReplyTo}
	}
	return Reply{parent: row.MessageID, references: refs}, nil
}

// Headers are a reply's In-Reply-To and References: the thread's chain, then the parent, then answers (the
// Message-IDs the caller names besides, in the pipeline's "<id>" form) not already in it; In-Reply-To is the
// last of answers, or the parent when there are none. A chain longer than the send task holds keeps its
// first Message-ID and drops from the middle, as RFC 5322 suggests.
func (r Reply) Headers(answers []string) (inReplyTo string, references []string) {
	refs := slices.Clone(r.references)
	for _, id := range append([]string{r.parent}, answers...) {
		if !slices.Contains(refs, id) {
			refs = append(refs, id)
		}
	}
	if n := len(refs); n > maxReplyReferences {
		refs = append(refs[:1], refs[n-maxReplyReferences+1:]...)
	}
	inReplyTo = r.parent
	if n := len(answers); n > 0 {
		inReplyTo = answers[n-1]
	}
	return inReplyTo, refs
}

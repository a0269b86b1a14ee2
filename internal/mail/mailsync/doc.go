// Package mailsync keeps each active mailbox's IMAP folders in the inbox store: INBOX, and Sent, Drafts,
// Spam/Junk, Trash and Archive when the server has them.
//
// One process at a time syncs a mailbox. It holds the mailbox's lease (mailbox_sync.lease_owner/until) and
// renews it by heartbeat; a process that dies stops renewing, and once the lease has run out the supervisor's
// next job for that mailbox, in any process, takes it over. A process that fails to renew stops syncing.
//
// A sync run: take the lease, log in, find the folders by their special-use attributes (or usual names),
// backfill each folder (messages received within the backfill window, newest BackfillMessages at most) and
// then follow INBOX live: IDLE where the server offers it, polling otherwise, fetching what arrives. Per
// folder the stored UIDVALIDITY decides whether the stored UIDs still mean anything (a new one drops the old
// generation and starts over); the last stored UID is where the next fetch starts; the highest MODSEQ is kept
// when the server offers CONDSTORE. Messages are parsed with enmime and stored once per (folder, UIDVALIDITY,
// UID), each joined to the thread of a stored message it answers or references, or of a stored message that
// references it, so replies stored before their parents still meet them; a new thread keeps its
// conversation's root Message-ID (conversation_key). Besides the addresses, subject and bodies (each clipped
// to 1 MiB, body_truncated saying so), a message keeps its Bcc and Reply-To, its MODSEQ (with CONDSTORE), a
// snippet, the auto-reply and list headers the reply classifier reads (auto_headers), and whether the
// mailbox wrote it (outbound: from Sent, or From the mailbox's address). Gmail's X-GM-MSGID is not fetched:
// go-imap offers no way to ask for a fetch item it does not know, so gmail_id stays empty.
//
// Flags of stored messages follow the server: with CONDSTORE only what changed since the stored MODSEQ is
// asked for, without it the newest messages' flags are re-read on each pass (an idling server reports changes
// as they happen). Each pass also asks which of the newest stored UIDs the server still has and deletes the
// others (expunged elsewhere). Read/unread changes made here go the other way: MarkSeen stores them and
// queues a SeenArgs job that stores \Seen on the server, best effort, skipping a folder renumbered since.
// Move does the same for folders: the row takes the destination's role at once and names the destination
// folder in move_to; a MoveArgs job moves it on the server (MOVE, or COPY and EXPUNGE) and, from the COPYUID
// the server answers, records its new place in the same row, so it keeps its id; a destination sync that
// meets it first adopts the row by its Message-ID instead of storing it twice. A login the provider refuses
// is logged once as EMAIL_AUTH_ERROR (with email_account.error) and resolved by the next login that works.
//
// Every path that adds, flags, moves or deletes messages refreshes the touched threads' summaries
// (inbox_thread_refresh) once per batch in its transaction, and emits inbox.email_received,
// inbox.email_updated or inbox.email_deleted per message (EmailEvent). A new UIDVALIDITY re-stores the folder
// without deletion events.
//
// Each new message that came in (not in Sent or Drafts, not From the mailbox itself) is told, in the
// transaction that stores it, to the inbound hook (OnInbound): the composition root gives the campaign
// engine's, which matches replies to campaign sends.
// Until the inbox classifies messages, a message counts as an out-of-office reply by a minimal rule
// (Auto-Submitted: auto-replied, or a subject starting "Automatic reply" or "Out of office"). A message
// dsn.Parse reads as a bounce, delay or complaint report is told with its Report and is never an
// out-of-office reply.
package mailsync

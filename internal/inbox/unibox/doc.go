// Package unibox reads the unified inbox: the thread list (one row per thread, compiled from its filters into
// one keyset query by ListSQL), the unread count, the sidebar overview, a conversation's messages, one message
// and a thread's categories. It takes its own input types; handlers translate the API into them.
//
// Invariants:
//   - Every statement names the organization, and row-level security stands behind it. A thread or message of
//     another organization, of a mailbox the caller may not use (Scope.Mailboxes), or an id that is not one,
//     answers the same 404 as an unknown id.
//   - The list reads inbox_thread_folders, one summary row per (thread, folder role) plus the role 'all' (every
//     folder but spam and trash), by keyset (last_message_at DESC, thread_id DESC) over the indexes that start
//     with (organization_id, folder_role) or (organization_id, mailbox_id, folder_role); it never scans
//     messages for the page's order and never uses OFFSET. inbox_thread_refresh keeps those rows true to the
//     messages; whoever changes messages (the read mark of GET /unibox/{id} goes through mailsync.MarkSeen) refreshes
//     them in the same transaction.
//   - Snoozes are the calling user's (Scope.User): they hide a thread from that user's list only while
//     snoozed_until is ahead of now, so a due snooze needs no sweep to return the thread.
//   - Counts are of threads, except Count (unread messages); headline counts leave out spam and trash.
//   - Times are compared with the now the caller passes (one clock per request), never the database's.
package unibox

// Package actions is what people do in the unified inbox besides reading it: mark messages read or unread
// (relayed to the mailbox's server through mailsync), snooze threads for themselves, put categories on
// threads, send replies and new messages through the send pipeline (with the organization's undo window, the
// mailbox's next gap or a chosen time), and list or cancel those sends before they leave.
//
// Every function runs in the caller's organization-scoped transaction, so its writes, jobs and events commit
// together with whatever else the request does (the feature gate, the audit entry). A Scope carries the
// mailboxes a mailbox-scoped API key may touch: messages, threads and sends of other mailboxes are treated as
// if they did not exist.
package actions

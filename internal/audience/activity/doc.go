// Package activity records what happened to contacts: the rows of contact_activities that the per-contact
// activity feed and timeline read. Every writer that changes a contact (notes, contact create and update,
// bulk campaign and category changes, the send pipeline's email events) records through Record, in the
// transaction that made the change, so the log can neither claim a change that rolled back nor miss one that
// committed.
//
// One call records one event for any number of contacts in one statement: a bulk change over 50,000
// contacts costs one INSERT, not 50,000.
package activity

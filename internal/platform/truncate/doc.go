// Package truncate cuts text that people sent (or that a remote server answered) to a length a message, a
// note or a column can hold. It counts characters, not bytes, so it never splits a character and agrees with
// the database's length limits. Areas that quote input back (contacts, mailboxes, sends) share it here rather
// than import each other.
package truncate

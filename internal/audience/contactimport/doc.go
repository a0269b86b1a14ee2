// Package contactimport loads a contact file into an organization's contact list: the options of a commit,
// the staging of the file's rows and the set-based writes that turn them into contacts and links.
//
// A load runs in the caller's organization-scoped transaction. It streams the accepted rows into a temporary
// staging table with COPY while the file is still being parsed (only the columns the mapping fills; see
// plan), then writes contacts with set-based statements for the dedup mode (an organization's first import
// skips the per-row check against existing addresses) and the links with one statement each. New and updated
// rows are written with search_ready false, which keeps them out of the trigram and sort indexes, and
// recorded in contact_index_pending (the new rows' id range, each updated id), where searches find them; the
// caller enqueues contacts.IndexArgs in the same transaction to put them in right after. When the planner
// takes the organization for a tenth of what it now has or less (its first large import), the load analyzes
// the organization column from a small sample in the same transaction (contacts_import_settle, a few
// milliseconds), so the searches before the index job has run plan with the right sizes, and Result.Analyzed
// asks the job for the full analyze.
//
// Past the file the caller hands over, nothing here holds the whole file: rows are read and loaded one at a
// time. The statements are built from the mapping out of constant pieces, since sqlc cannot see the
// temporary tables they work on; the static ones live in queries/contact_import.sql.
package contactimport

// Package timezone is the list of time zones offered to people choosing one for a schedule or a mailbox:
// IANA names from Go's tz database, each with a name a person reads. The binary embeds that database
// (time/tzdata), so every zone resolves on hosts without /usr/share/zoneinfo.
package timezone

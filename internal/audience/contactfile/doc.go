// Package contactfile reads contact import files (CSV and XLSX) and turns their rows into contacts: it is
// the part of an import that is neither HTTP nor SQL.
//
// Reading streams: Open returns a Rows that yields one row at a time, so a commit can hand rows to Postgres
// (COPY) while the rest of the file is still being parsed. CSV files may start with a byte-order mark, may be
// UTF-8, UTF-16 (with its BOM) or Windows-1252 (what spreadsheet programs write by default in much of the
// world), and use a comma, a semicolon or a tab as delimiter, whichever the first line uses most. XLSX
// workbooks are read from their active sheet through excelize's row iterator; the workbook itself is
// unzipped in memory (the format is a zip archive and needs random access), with a size cap against zip
// bombs. Rows whose every cell is blank (the ",,,," lines spreadsheets leave at the end) are not rows.
//
// Previews (ReadPreview) count the file's rows, detect whether the first row is a header (DetectHeader) and
// suggest where each column goes (Suggest). Commits run every data row through an Importer, which
// normalizes the address, drops repeats within the file, reads the optional columns (subscription,
// categories, an external verifier's verdict, custom fields) and keeps the report the API returns: failures
// and notes by file line (at most MaxEntries), and the advisory quality counts.
package contactfile

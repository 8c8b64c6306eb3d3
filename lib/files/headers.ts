// The response headers that say what a write did to storage (docs/files.md). Named once: the files
// plugin writes them, and the CORS plugin exposes them to the pages of listed origins.

/** JSON object: each stored key (`<table>/<name>`) to the name the file was sent under. */
export const UPLOADED_FILES_HEADER = 'x-uploaded-files'
/** JSON array of the keys removed. */
export const DELETED_FILES_HEADER = 'x-deleted-files'

'use strict'
// A title without its markup, for the <title> element.
module.exports = (html) => (html ? String(html).replace(/<[^>]+>/g, '') : html)

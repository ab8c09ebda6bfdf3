'use strict'
// A site-root URL (/quarkus-mysql-lock/dev/index.html) as a path relative to the current page, so that the site works
// from any directory and from file:// as well as from a server.
const { posix: path } = require('path')

module.exports = (to, from, ctx) => {
  if (!to) return '#'
  if (to.charAt(0) !== '/') return to
  if (!ctx) {
    ctx = from
    from = ctx.data.root.page.url
  }
  if (!from) return to
  let hash = ''
  const hashIdx = to.indexOf('#')
  if (hashIdx >= 0) {
    hash = to.slice(hashIdx)
    to = to.slice(0, hashIdx)
  }
  if (to === from) return hash || (to.endsWith('/') ? './' : path.basename(to))
  const rel = path.relative(path.dirname(from + '.'), to) || '.'
  return rel + (to.endsWith('/') ? '/' : '') + hash
}

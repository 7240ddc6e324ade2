// The CAP server with the CSRF check SAP puts in front of an OData service
// (S/4HANA's Gateway, or the approuter before a CAP app on BTP): CAP itself
// issues no x-csrf-token. SAPCAP_CSRF=0 serves CAP as it is. It listens on
// 127.0.0.1 unless SAPCAP_HOST says otherwise.
const cds = require('@sap/cds')
const crypto = require('node:crypto')

const sessions = new Map() // session cookie -> CSRF token
const cookieName = 'SAP_SESSIONID'

function session(req) {
  const m = (req.headers.cookie || '').match(new RegExp(cookieName + '=([^;]+)'))
  return m ? m[1] : ''
}

cds.on('bootstrap', (app) => {
  // CAP listens on every interface; a test server keeps to loopback.
  const listen = app.listen.bind(app)
  app.listen = (port, ...rest) => listen(port, process.env.SAPCAP_HOST || '127.0.0.1', ...rest)
  if (process.env.SAPCAP_CSRF === '0') return
  app.use((req, res, next) => {
    const sent = req.headers['x-csrf-token'] || ''
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (sent.toLowerCase() === 'fetch') {
        let id = session(req)
        if (!sessions.has(id)) {
          id = crypto.randomBytes(16).toString('hex')
          sessions.set(id, crypto.randomBytes(16).toString('base64url'))
          res.setHeader('Set-Cookie', `${cookieName}=${id}; Path=/; HttpOnly`)
        }
        res.setHeader('x-csrf-token', sessions.get(id))
      }
      return next()
    }
    const want = sessions.get(session(req))
    if (!want || sent !== want) {
      res.setHeader('x-csrf-token', 'Required')
      return res.status(403).type('text/plain').send('CSRF token validation failed')
    }
    next()
  })
})

module.exports = cds.server

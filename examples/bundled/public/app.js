// The bundled example's page (served at / by `npm start`, routes/example-page.ts): sign up or log in,
// list the posts, write one, and see everyone's new posts live, all through fastbase/client. Text is
// only ever set as textContent, and the Content-Security-Policy allows this origin's scripts alone.
import { createClient } from '/client/index.js'

const fb = createClient(location.origin)
const $ = (selector) => document.querySelector(selector)
const posts = new Map()
let stop
let subscribedAs

function say (text) { $('#message').textContent = text }

/** Runs a form's action; its error (a FastbaseError: message and per-field data) is shown. */
function onSubmit (form, action) {
  $(form).addEventListener('submit', async (event) => {
    event.preventDefault()
    const fields = Object.fromEntries(new FormData(event.target))
    say('')
    try {
      await action(fields, event.target)
    } catch (error) {
      const details = Object.entries(error.data ?? {}).map(([field, problem]) => `${field}: ${problem?.message ?? problem}`)
      say([error.message, ...details].join(' — '))
    }
  })
}

function render () {
  const list = $('#posts')
  const sorted = [...posts.values()].sort((a, b) => String(b.created).localeCompare(String(a.created)))
  list.replaceChildren(...sorted.map((post) => {
    const item = document.createElement('li')
    item.dataset.id = post.id
    const title = document.createElement('strong')
    title.textContent = post.title
    item.append(title)
    if (!post.published) {
      const draft = document.createElement('span')
      draft.className = 'draft'
      draft.textContent = 'draft'
      item.append(draft)
    }
    if (post.body) {
      const body = document.createElement('p')
      body.textContent = post.body
      item.append(body)
    }
    return item
  }))
}

function showAll (items) {
  posts.clear()
  for (const post of items) posts.set(post.id, post)
  render()
}

/** One subscription, made anew when who is signed in changes (the rules decide what it shows). */
async function follow () {
  const user = fb.auth.user
  $('#signed-out').hidden = user !== null
  $('#signed-in').hidden = user === null
  $('#user').textContent = user?.username ?? ''
  if (stop !== undefined && subscribedAs === (user?.id ?? null)) return
  stop?.()
  subscribedAs = user?.id ?? null
  $('#live').textContent = 'connecting…'
  stop = fb.table('posts').subscribe({}, (event) => {
    if (event.type === 'open') $('#live').textContent = 'live'
    else if (event.type === 'refetch') showAll(event.items)
    else if (event.type === 'change' && event.action === 'delete') posts.delete(event.record.id)
    else if (event.type === 'change') posts.set(event.record.id, { ...posts.get(event.record.id), ...event.record })
    else if (event.type === 'end') $('#live').textContent = `not live (${event.reason})`
    render()
  })
  try {
    showAll((await fb.table('posts').list({ order: '-created', limit: 50 })).items)
  } catch (error) {
    say(error.message)
  }
}

onSubmit('#signup', async ({ username, email, password }) => {
  await fb.auth.signUp({ username, email, name: username, password, passwordConfirm: password })
})
onSubmit('#login', async ({ identity, password }) => {
  await fb.auth.login({ identity, password })
})
onSubmit('#new-post', async ({ title, body, published }, form) => {
  const [post] = await fb.table('posts').insert({ values: { author_id: fb.auth.user.id, title, body, published: published === 'on' }, returning: '*' })
  posts.set(post.id, post)
  render()
  form.reset()
})
$('#logout').addEventListener('click', async () => { await fb.auth.logout() })

fb.auth.onChange(() => { void follow() })
await fb.auth.ready()
await follow()

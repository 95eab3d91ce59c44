/**
 * The console builds every element through `el`: attributes are set one by one and children are
 * elements or text nodes, so a string from a user or an integrator (a reference, a note, an
 * address) is always text, never HTML. Nothing here (or anywhere in the console) sets innerHTML.
 */
type Child = Node | string | null | undefined | false;
type Handlers = Partial<{ [K in keyof HTMLElementEventMap]: (event: HTMLElementEventMap[K]) => void }>;
type Attributes = { on?: Handlers; [name: string]: string | boolean | undefined | Handlers };

export const el = <K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] => {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'on' || typeof value === 'object' || value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const [type, handler] of Object.entries(attributes.on ?? {})) element.addEventListener(type, handler as EventListener);
  append(element, ...children);
  return element;
};

export const append = (parent: Node, ...children: Child[]) => {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
};

/** Replaces an element's children. */
export const replace = (parent: Element, ...children: Child[]) => {
  parent.replaceChildren();
  append(parent, ...children);
};

/** A message region: `status` for news, `alert` for a refusal or failure. */
export const notice = (kind: 'status' | 'alert', text: string) => el('p', { role: kind, class: `notice ${kind}` }, text);

export const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A timestamp in the reader's locale and time zone; the exact UTC value on hover. */
export const when = (iso: string | null) =>
  iso ? el('time', { datetime: iso, title: iso }, new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })) : '—';

/** A long identifier (hash, address) shortened for a table cell, whole on hover and when copied. */
export const shortened = (value: string | null, keep = 10) =>
  value === null ? '—' : value.length <= keep * 2 + 1 ? el('code', {}, value) : el('code', { title: value, class: 'short' }, `${value.slice(0, keep)}…${value.slice(-6)}`);

/** A table with a header row; rows are arrays of cells. */
export const table = (caption: string, headers: string[], rows: HTMLTableRowElement[], empty: string) =>
  rows.length === 0
    ? el('p', { class: 'empty' }, empty)
    : el(
        'table',
        { role: 'table', 'aria-label': caption },
        el('thead', {}, el('tr', {}, ...headers.map((header) => el('th', { scope: 'col' }, header)))),
        el('tbody', {}, ...rows),
      );

export const row = (...cells: Child[]) => el('tr', {}, ...cells.map((cell) => el('td', {}, cell)));

export const labelled = (label: string, input: HTMLElement) => {
  const id = `field-${Math.random().toString(36).slice(2)}`;
  input.id = id;
  return el('div', { class: 'field' }, el('label', { for: id }, label), input);
};

/**
 * A form's submit handler: the button waits while `act` runs; what it returns (or its failure, as
 * an alert) shows in `outcome`; `failed` runs after a failure (to clear a used code, say).
 */
export const submitting =
  (button: HTMLButtonElement, outcome: HTMLElement, act: () => Promise<HTMLElement | null>, failed: () => void = () => {}) =>
  (event: SubmitEvent) => {
    event.preventDefault();
    button.disabled = true;
    outcome.replaceChildren();
    act()
      .then((shown) => shown && outcome.replaceChildren(shown))
      .catch((error: unknown) => {
        outcome.replaceChildren(notice('alert', errorText(error)));
        failed();
      })
      .finally(() => (button.disabled = false));
  };

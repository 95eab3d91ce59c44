import type { Page } from './api.js';
import { el, errorText, labelled, notice, replace } from './dom.js';

/**
 * Cursor paging (CONTRACT §6) for a list: Previous and Next move through the pages seen so far
 * and the next cursor; `reset` starts again from the newest (after a filter changes).
 */
export const paged = <T>(into: HTMLElement, load: (cursor: string | null) => Promise<Page<T>>, draw: (items: T[]) => HTMLElement) => {
  const cursors: (string | null)[] = [null];
  let index = 0;
  const show = async () => {
    const page = await load(cursors[index] ?? null);
    cursors[index + 1] = page.nextCursor;
    cursors.length = index + 2;
    const previous = el('button', { type: 'button', class: 'secondary', disabled: index === 0 }, 'Previous page');
    const next = el('button', { type: 'button', class: 'secondary', disabled: page.nextCursor === null }, 'Next page');
    previous.addEventListener('click', () => ((index -= 1), void show()));
    next.addEventListener('click', () => ((index += 1), void show()));
    replace(into, draw(page.items), el('div', { class: 'pager' }, previous, el('span', {}, `Page ${index + 1}`), next));
  };
  return {
    reset: () => {
      cursors.length = 1;
      index = 0;
      return show();
    },
  };
};

/**
 * A list page: its title and hint, filter fields (a change starts again from the newest), a place
 * for messages, and the paged list. `reload` draws the first page again.
 */
export const listPage = <T>(
  container: HTMLElement,
  page: { title: string; hint: string; filters: Record<string, HTMLInputElement | HTMLSelectElement>; messages?: HTMLElement; load: (cursor: string | null) => Promise<Page<T>>; draw: (items: T[]) => HTMLElement },
) => {
  const list = el('div', { class: 'list' });
  const pages = paged(list, page.load, page.draw);
  const reload = () => pages.reset().catch((error: unknown) => replace(list, notice('alert', errorText(error))));
  const fields = Object.entries(page.filters).map(([label, field]) => (field.addEventListener('change', reload), labelled(label, field)));
  replace(container, el('h1', {}, page.title), el('p', { class: 'hint' }, page.hint), el('div', { class: 'filters' }, ...fields), page.messages, list);
  return { reload };
};

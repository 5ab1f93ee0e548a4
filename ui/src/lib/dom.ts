// A small element builder, so panels read as the DOM they make.

type Child = Node | string | null | undefined | false;
type Props = {
  class?: string;
  title?: string;
  text?: string;
  data?: Record<string, string>;
  attrs?: Record<string, string>;
  on?: { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void };
};

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.class) element.className = props.class;
  if (props.title) element.title = props.title;
  if (props.text !== undefined) element.textContent = props.text;
  for (const [key, value] of Object.entries(props.data ?? {})) element.dataset[key] = value;
  for (const [key, value] of Object.entries(props.attrs ?? {})) element.setAttribute(key, value);
  for (const [type, handler] of Object.entries(props.on ?? {})) {
    element.addEventListener(type, handler as EventListener);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

export function clear(element: Element): void {
  element.replaceChildren();
}

/** A button with a label and a click handler. */
export function button(
  label: string,
  onClick: () => void,
  props: Omit<Props, "on" | "text"> = {},
): HTMLButtonElement {
  const b = h("button", { ...props, text: label, on: { click: onClick } });
  b.type = "button";
  return b;
}

// Resizable panels: a splitter drags a CSS variable (a panel's size in pixels), kept between
// runs. Sizes are set through the CSSOM, which the strict style policy allows.

export interface SplitterOptions {
  /** The CSS variable holding the size, e.g. "--tree-width". */
  variable: string;
  axis: "x" | "y";
  min: number;
  max: number;
  /** The panel grows as the pointer moves left/up (a panel on the right or at the bottom). */
  inverted?: boolean;
}

const STORE_KEY = "lantern.layout";

function saved(): Record<string, number> {
  try {
    return JSON.parse(localStorage.getItem(STORE_KEY) ?? "{}") as Record<string, number>;
  } catch {
    return {};
  }
}

export function clampSize(size: number, min: number, max: number): number {
  return Math.round(Math.max(min, Math.min(max, size)));
}

export function setSize(variable: string, size: number): void {
  document.documentElement.style.setProperty(variable, `${size}px`);
}

export function makeSplitter(handle: HTMLElement, options: SplitterOptions): void {
  const initial = saved()[options.variable];
  if (initial !== undefined) setSize(options.variable, clampSize(initial, options.min, options.max));
  handle.setAttribute("role", "separator");
  handle.setAttribute("aria-orientation", options.axis === "x" ? "vertical" : "horizontal");
  handle.addEventListener("pointerdown", (down) => {
    down.preventDefault();
    handle.setPointerCapture(down.pointerId);
    handle.classList.add("dragging");
    const start = options.axis === "x" ? down.clientX : down.clientY;
    const current = parseFloat(getComputedStyle(document.documentElement).getPropertyValue(options.variable)) || options.min;
    let size = current;
    const move = (event: PointerEvent) => {
      const delta = (options.axis === "x" ? event.clientX : event.clientY) - start;
      size = clampSize(current + (options.inverted ? -delta : delta), options.min, options.max);
      setSize(options.variable, size);
    };
    const up = () => {
      handle.classList.remove("dragging");
      handle.removeEventListener("pointermove", move);
      handle.removeEventListener("pointerup", up);
      localStorage.setItem(STORE_KEY, JSON.stringify({ ...saved(), [options.variable]: size }));
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", up);
  });
}

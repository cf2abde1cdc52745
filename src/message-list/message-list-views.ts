/** `messageList.get`: the list's views (stored, UI, model and prompt forms), each made on first access. */
import type { MastraDBMessage } from './types.js';
import type { ConversationStore } from './internal/conversation-store.js';
import type { ConversationSource } from './serialized-message-list.js';
import type { MessageListAllView, MessageListView, MessageListViews } from './message-list-types.js';
import type { CoreSystemMessage } from './types.js';
import { toUIMessage } from './to-ui.js';
import { toModelMessages } from './to-model.js';
import { toPrompt } from './to-prompt.js';

/*
 * The views are built once per list, each on first use (a run reads `all` every step, the others
 * only when a processor asks).
 */
function view(select: () => MastraDBMessage[]): MessageListView {
  const result = { db: select } as MessageListView;
  result.ui = () => select().map(toUIMessage);
  result.model = () => toModelMessages(select());
  result.core = result.model;
  return result;
}

function sourceView(store: ConversationStore, source: ConversationSource): MessageListView {
  return view(() => store.from(source));
}

/** `messageList.get`: each view made on first access, then the same object every time. */
export class ListViews implements MessageListViews {
  #all: MessageListAllView | undefined;
  #input: MessageListView | undefined;
  #response: MessageListView | undefined;
  #remembered: MessageListView | undefined;

  constructor(
    private readonly list: { getAllSystemMessages(): CoreSystemMessage[] },
    private readonly store: ConversationStore,
  ) {}

  get all(): MessageListAllView {
    if (this.#all === undefined) {
      const { list, store } = this;
      const all = view(() => store.all().slice()) as MessageListAllView;
      all.prompt = () => toPrompt({ systemMessages: list.getAllSystemMessages(), messages: store.all() });
      this.#all = all;
    }
    return this.#all;
  }

  set all(value: MessageListAllView) {
    this.#all = value;
  }

  get input(): MessageListView {
    return (this.#input ??= sourceView(this.store, 'input'));
  }

  set input(value: MessageListView) {
    this.#input = value;
  }

  get response(): MessageListView {
    return (this.#response ??= sourceView(this.store, 'response'));
  }

  set response(value: MessageListView) {
    this.#response = value;
  }

  get remembered(): MessageListView {
    return (this.#remembered ??= sourceView(this.store, 'memory'));
  }

  set remembered(value: MessageListView) {
    this.#remembered = value;
  }
}

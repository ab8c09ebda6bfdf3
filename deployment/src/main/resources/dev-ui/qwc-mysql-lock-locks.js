import { LitElement, html, css } from 'lit';
import { JsonRpc } from 'jsonrpc';
import '@vaadin/grid';
import '@vaadin/grid/vaadin-grid-sort-column.js';
import '@vaadin/button';
import '@vaadin/progress-bar';
import { columnBodyRenderer } from '@vaadin/grid/lit.js';
import { notifier } from 'notifier';

/**
 * The distributed locks of this application, per lock datasource: the engine and why it was chosen, its health, the
 * locks this instance holds, every holder the server knows of, and force-release of a lease (LEASE engine).
 */
export class QwcMysqlLockLocks extends LitElement {

    jsonRpc = new JsonRpc(this);

    static styles = css`
        :host { display: flex; flex-direction: column; gap: 1em; padding: 0.5em 1em; }
        .manager { display: flex; flex-direction: column; gap: 0.5em; }
        .head { display: flex; gap: 1em; align-items: baseline; flex-wrap: wrap; }
        .engine { font-weight: bold; }
        .up { color: var(--lumo-success-text-color); }
        .down { color: var(--lumo-error-text-color); }
        .reason { color: var(--lumo-secondary-text-color); }
        vaadin-grid { height: auto; }
    `;

    static properties = {
        _managers: { state: true },
    };

    connectedCallback() {
        super.connectedCallback();
        this._refresh();
    }

    _refresh() {
        this.jsonRpc.getManagers().then(response => {
            this._managers = response.result;
        });
    }

    render() {
        if (!this._managers) {
            return html`<vaadin-progress-bar indeterminate></vaadin-progress-bar>`;
        }
        if (this._managers.length === 0) {
            return html`<p>No lock manager is in use yet.</p>`;
        }
        return html`
            <vaadin-button theme="small" @click=${() => this._refresh()}>Refresh</vaadin-button>
            ${this._managers.map(manager => this._renderManager(manager))}`;
    }

    _renderManager(manager) {
        return html`
            <div class="manager">
                <div class="head">
                    <span>Datasource <code>${manager.datasource}</code></span>
                    <span class="engine">${manager.engine}</span>
                    <span class="${manager.up ? 'up' : 'down'}">${manager.up ? 'UP' : 'DOWN: ' + manager.problem}</span>
                </div>
                <div class="reason">Chosen because ${manager.reason}</div>
                <h4>Held by this instance (${manager.held.length})</h4>
                ${this._renderLocks(manager, manager.held, false)}
                <h4>All holders the server knows of (${manager.holders.length})</h4>
                ${manager.holdersProblem ? html`<div class="down">${manager.holdersProblem}</div>` : ''}
                ${this._renderLocks(manager, manager.holders, manager.engine === 'LEASE')}
            </div>`;
    }

    _renderLocks(manager, locks, releasable) {
        return html`
            <vaadin-grid .items=${locks} theme="compact row-stripes" all-rows-visible>
                <vaadin-grid-sort-column path="name" header="Lock"></vaadin-grid-sort-column>
                <vaadin-grid-sort-column path="holder" header="Holder"></vaadin-grid-sort-column>
                <vaadin-grid-sort-column path="since" header="Since (server time)"></vaadin-grid-sort-column>
                <vaadin-grid-sort-column path="fencingToken" header="Fencing token"></vaadin-grid-sort-column>
                ${releasable ? html`<vaadin-grid-column header="" ${columnBodyRenderer(lock => html`
                    <vaadin-button theme="small error" @click=${() => this._forceRelease(manager, lock)}>
                        Force release
                    </vaadin-button>`, [])}></vaadin-grid-column>` : ''}
            </vaadin-grid>`;
    }

    _forceRelease(manager, lock) {
        this.jsonRpc.forceRelease({ datasource: manager.datasource, name: lock.name }).then(response => {
            const outcome = response.result;
            notifier.showInfoMessage(outcome.message);
            this._refresh();
        });
    }
}

customElements.define('qwc-mysql-lock-locks', QwcMysqlLockLocks);

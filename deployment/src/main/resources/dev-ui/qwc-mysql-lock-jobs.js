import { LitElement, html, css, svg } from 'lit';
import { JsonRpc } from 'jsonrpc';
import '@vaadin/grid';
import '@vaadin/button';
import '@vaadin/progress-bar';
import { notifier } from 'notifier';

/**
 * The scheduled jobs of the fleet, per lock datasource: each job's state, last outcome and recent runs (with a chart of
 * their durations), and pause, resume, disable, enable and run-now, recorded in the audit trail as done by the Dev UI.
 */
export class QwcMysqlLockJobs extends LitElement {

    jsonRpc = new JsonRpc(this);

    static styles = css`
        :host { display: flex; flex-direction: column; gap: 1em; padding: 0.5em 1em; }
        .job { display: flex; flex-direction: column; gap: 0.4em; border-bottom: 1px solid var(--lumo-contrast-10pct);
               padding-bottom: 1em; }
        .head { display: flex; gap: 1em; align-items: baseline; flex-wrap: wrap; }
        .name { font-weight: bold; }
        .ACTIVE { color: var(--lumo-success-text-color); }
        .PAUSED, .DISABLED { color: var(--lumo-warning-text-color, orange); }
        .detail { color: var(--lumo-secondary-text-color); }
        .buttons { display: flex; gap: 0.5em; }
        .down { color: var(--lumo-error-text-color); }
        svg .SUCCEEDED { fill: var(--lumo-success-color, green); }
        svg .FAILED, svg .LOST, svg .CANCELLED { fill: var(--lumo-error-color, red); }
        svg rect { fill: var(--lumo-contrast-30pct); }
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
        this.jsonRpc.getJobs().then(response => {
            this._managers = response.result;
        });
    }

    render() {
        if (!this._managers) {
            return html`<vaadin-progress-bar indeterminate></vaadin-progress-bar>`;
        }
        const jobs = this._managers.reduce((count, manager) => count + manager.jobs.length, 0);
        return html`
            <vaadin-button theme="small" @click=${() => this._refresh()}>Refresh</vaadin-button>
            ${jobs === 0 ? html`<p>No scheduled job has claimed a tick yet.</p>` : ''}
            ${this._managers.map(manager => html`
                ${manager.problem ? html`<div class="down">${manager.datasource}: ${manager.problem}</div>` : ''}
                ${manager.jobs.map(job => this._renderJob(manager, job))}`)}`;
    }

    _renderJob(manager, job) {
        return html`
            <div class="job">
                <div class="head">
                    <span class="name">${job.name}</span>
                    <span class="${job.state}">${job.state}</span>
                    <span class="detail">datasource <code>${manager.datasource}</code></span>
                    <span class="detail">next fire ${job.nextFire ?? 'unknown'}</span>
                    <span class="detail">last outcome ${job.lastOutcome ?? 'none'}</span>
                    <span class="detail">last success ${job.lastSuccess ?? 'never'}</span>
                    <span class="detail">last failure ${job.lastFailure ?? 'never'}</span>
                </div>
                <div class="buttons">
                    ${job.state === 'ACTIVE' ? this._button(manager, job, 'pause', 'Pause') : ''}
                    ${job.state === 'PAUSED' ? this._button(manager, job, 'resume', 'Resume') : ''}
                    ${job.state === 'DISABLED' ? this._button(manager, job, 'enable', 'Enable')
                                               : this._button(manager, job, 'disable', 'Disable')}
                    ${this._button(manager, job, 'run-now', 'Run now')}
                </div>
                ${this._chart(job.runs)}
                <vaadin-grid .items=${job.runs} theme="compact row-stripes" all-rows-visible>
                    <vaadin-grid-column path="tick" header="Tick"></vaadin-grid-column>
                    <vaadin-grid-column path="kind" header="Kind"></vaadin-grid-column>
                    <vaadin-grid-column path="outcome" header="Outcome"></vaadin-grid-column>
                    <vaadin-grid-column path="millis" header="ms"></vaadin-grid-column>
                    <vaadin-grid-column path="instance" header="Instance"></vaadin-grid-column>
                    <vaadin-grid-column path="error" header="Error"></vaadin-grid-column>
                </vaadin-grid>
                ${job.changes.length ? html`<div class="detail">Changes: ${job.changes.map(change =>
                    `${change.action} by ${change.by} at ${change.at}`).join('; ')}</div>` : ''}
            </div>`;
    }

    /** How long the recent runs took, oldest on the left: a bar each, coloured by outcome. */
    _chart(runs) {
        const timed = runs.filter(run => run.millis !== null && run.millis !== undefined).reverse();
        if (timed.length === 0) {
            return '';
        }
        const longest = Math.max(1, ...timed.map(run => run.millis));
        const width = 12;
        return html`<svg width="${timed.length * width}" height="40" role="img"
                         aria-label="durations of the last ${timed.length} runs">
            ${timed.map((run, i) => svg`<rect class="${run.outcome}" x="${i * width}" width="${width - 2}"
                y="${40 - Math.max(2, 38 * run.millis / longest)}" height="${Math.max(2, 38 * run.millis / longest)}">
                <title>${run.tick}: ${run.outcome}, ${run.millis} ms</title></rect>`)}
        </svg>`;
    }

    _button(manager, job, action, label) {
        return html`<vaadin-button theme="small" @click=${() => this._change(manager, job, action)}>${label}</vaadin-button>`;
    }

    _change(manager, job, action) {
        this.jsonRpc.changeJob({ datasource: manager.datasource, job: job.name, action: action }).then(response => {
            const outcome = response.result;
            if (outcome.done) {
                notifier.showInfoMessage(outcome.message);
            } else {
                notifier.showErrorMessage(outcome.message);
            }
            this._refresh();
        });
    }
}

customElements.define('qwc-mysql-lock-jobs', QwcMysqlLockJobs);

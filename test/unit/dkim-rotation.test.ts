import { expect } from 'chai';
import {
  dueSteps,
  nextRotationAt,
  rotationTarget,
  switchedKeys,
  type KeySlot,
  type RotationSettings,
} from '../../src/modules/deliverability/domains/dkim-rotation.js';
import { presentDkim } from '../../src/modules/deliverability/domains/domains.presenter.js';

const DAY = 86_400_000;
const s: RotationSettings = { rotateAfterMs: 180 * DAY, retireAfterMs: 7 * DAY, keyTtlMs: 300_000 };
const key = (selector: string, state: KeySlot['state'], publishedAt = 0, retireAt: number | null = null): KeySlot => ({
  selector,
  state,
  publishedAt,
  retireAt,
  publicKey: `pk-${selector}-${publishedAt}`,
});
const domain = (over: Partial<{ status: string; activeSelector: string; dkimActivatedAt: number }> = {}) => ({
  status: 'verified',
  activeSelector: 'ph1',
  dkimActivatedAt: 0,
  ...over,
});

describe('DKIM key rotation (pure)', function () {
  describe('the selector a new key goes to', function () {
    it('takes a standby selector of a new domain, never the active one', function () {
      expect(rotationTarget([key('ph1', 'active'), key('ph2', 'standby'), key('ph3', 'standby')], s)).to.deep.equal({
        selector: 'ph2',
      });
      expect(rotationTarget([key('ph1', 'standby'), key('ph2', 'active'), key('ph3', 'standby')], s)).to.deep.equal({
        selector: 'ph1',
      });
    });

    it('prefers a selector whose key was removed to one holding a standby key, and skips a retiring one', function () {
      expect(
        rotationTarget([key('ph1', 'retiring', 0, 10), key('ph2', 'active'), key('ph3', 'standby')], s),
      ).to.deep.equal({ selector: 'ph3' });
      expect(rotationTarget([key('ph2', 'active'), key('ph3', 'standby')], s)).to.deep.equal({ selector: 'ph1' });
    });

    it('refuses a second rotation while one is under way, saying when the pending key signs', function () {
      const r = rotationTarget(
        [key('ph1', 'active'), key('ph2', 'pending', Date.UTC(2026, 0, 1)), key('ph3', 'standby')],
        s,
      );
      expect(r).to.have.property('refused').that.includes('ph2').and.includes('2026-01-01T00:05:00.000Z');
    });

    it('refuses when every selector holds a key in use, naming when one is freed', function () {
      const r = rotationTarget(
        [
          key('ph1', 'retiring', 0, Date.UTC(2026, 0, 8)),
          key('ph2', 'retiring', 0, Date.UTC(2026, 0, 9)),
          key('ph3', 'active'),
        ],
        s,
      );
      expect(r).to.have.property('refused').that.includes('2026-01-08T00:00:00.000Z');
    });
  });

  describe('the steps due', function () {
    it('switches to a pending key only after it was served longer than its TTL', function () {
      const keys = [key('ph1', 'active'), key('ph2', 'pending', 1000)];
      expect(dueSteps(domain(), keys, 1000 + s.keyTtlMs, s).switchTo).to.equal(null);
      expect(dueSteps(domain(), keys, 1001 + s.keyTtlMs, s).switchTo).to.equal('ph2');
    });

    it('removes a retiring key once its time has come, not before', function () {
      const keys = [key('ph1', 'retiring', 0, 5000), key('ph2', 'active')];
      expect(dueSteps(domain({ activeSelector: 'ph2' }), keys, 4999, s).retire).to.deep.equal([]);
      expect(dueSteps(domain({ activeSelector: 'ph2' }), keys, 5000, s).retire).to.deep.equal(['ph1']);
    });

    it('starts a rotation of a verified domain rotate_after after its key began signing; never with 0, never for an unverified domain, never twice', function () {
      const keys = [key('ph1', 'active'), key('ph2', 'standby')];
      expect(dueSteps(domain({ dkimActivatedAt: 10 }), keys, 10 + s.rotateAfterMs - 1, s).start).to.equal(false);
      expect(dueSteps(domain({ dkimActivatedAt: 10 }), keys, 10 + s.rotateAfterMs, s).start).to.equal(true);
      expect(dueSteps(domain({ status: 'pending' }), keys, s.rotateAfterMs * 2, s).start).to.equal(false);
      expect(dueSteps(domain(), keys, s.rotateAfterMs * 2, { ...s, rotateAfterMs: 0 }).start).to.equal(false);
      expect(dueSteps(domain(), [...keys, key('ph3', 'pending', 1)], s.rotateAfterMs * 2, s).start).to.equal(false);
    });

    it('has no next rotation when rotation by age is off', function () {
      expect(nextRotationAt({ dkimActivatedAt: 5 }, s)).to.equal(5 + 180 * DAY);
      expect(nextRotationAt({ dkimActivatedAt: 5 }, { rotateAfterMs: 0 })).to.equal(null);
    });
  });

  it('a switch makes the pending key active and the active one retiring for retire_after; other keys are left alone', function () {
    const after = switchedKeys([key('ph1', 'active'), key('ph2', 'pending', 7), key('ph3', 'standby')], 'ph2', 1000, s);
    expect(after.map((k) => [k.selector, k.state, k.retireAt])).to.deep.equal([
      ['ph1', 'retiring', 1000 + s.retireAfterMs],
      ['ph2', 'active', null],
      ['ph3', 'standby', null],
    ]);
  });

  it('shows the active selector, the next rotation, a rotation under way and the keys retiring', function () {
    const t0 = Date.UTC(2026, 5, 1);
    const shown = presentDkim(
      domain({ activeSelector: 'ph2', dkimActivatedAt: t0 }),
      [key('ph1', 'retiring', 0, t0 + s.retireAfterMs), key('ph2', 'active', t0), key('ph3', 'pending', t0 + DAY)],
      s,
    );
    expect(shown).to.deep.equal({
      active_selector: 'ph2',
      active_since: '2026-06-01T00:00:00.000Z',
      next_rotation_at: '2026-11-28T00:00:00.000Z',
      rotation: { selector: 'ph3', published_at: '2026-06-02T00:00:00.000Z', signs_from: '2026-06-02T00:05:00.000Z' },
      retiring: [{ selector: 'ph1', removed_at: '2026-06-08T00:00:00.000Z' }],
    });
  });
});

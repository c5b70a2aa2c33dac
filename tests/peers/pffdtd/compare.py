"""compare.py OUT PF [hall] - PFFDTD's responses (OUT/pffdtd-{cart,fcc}.h5, from the inputs in PF)
and roomsim's against roomsim's converged reference, per octave band, as roomsim converge
measures them: the rms of the sixth-octave level differences and the level of the first 50 ms
after the direct sound, the worst over the receivers. The seminar room (tests/gpu/pffdtd.sh):
roomsim's WAVs in OUT as RUN-S_RECEIVER.wav, PF/cart and PF/fcc PFFDTD's inputs; the hall
(tests/gpu/pffdtd-hall.sh): OUT/roomsim.tgz unpacked into OUT (OUT/RUN/stage_RECEIVER.wav), PF
PFFDTD's input folder (hall_fcc). PFFDTD's output is processed as its own process_outputs.py
does (the 8 trilinear points summed, a 10 Hz high-pass with the integrator of its
differentiated source), resampled to the WAVs' rate and scaled by one gain for all receivers
(its level scale is not roomsim's): the reference's level over 44 Hz to 1.4 kHz. Where OUT holds
no PFFDTD output (ROOMSIM_ONLY=1), roomsim's rows alone."""
import numpy as np, h5py, sys
from scipy.io import wavfile
from scipy.signal import butter, bilinear_zpk, zpk2sos, sosfilt, resample_poly
d = sys.argv[1].rstrip('/') + '/'  # tests/gpu/pffdtd.sh's OUT
pf = sys.argv[2].rstrip('/') + '/'  # the PFFDTD inputs (.gpu/pf)
hall = len(sys.argv) > 3 and sys.argv[3] == 'hall'
def wav(run, rec):
    name = ('%s/stage_%s.wav' if hall else '%s-S_%s.wav') % (run, rec)
    fs, x = wavfile.read(d + name); return fs, x.astype(np.float64)
def onset(h):  # first sample whose square reaches 20 dB below the largest
    e = h * h; return int(np.argmax(e >= 0.01 * e.max()))
def power(x, n, m):
    y = np.zeros(m); y[:min(n, m)] = x[:min(n, m)]; X = np.fft.rfft(y); return np.abs(X) ** 2
def be(P, m, fs, f1, f2):
    k = np.arange(len(P)); f = k * fs / m; return P[(f >= f1) & (f < f2)].sum()
bands = [62.5 * 2 ** i for i in range(5)]  # 63 .. 1k (IEC nominal close enough for edges)
def metrics(a, x, fs):
    n = min(len(a), len(x)); m = 1
    while m < n: m *= 2
    on = onset(a[:n]); early = min(n, on + int(0.05 * fs))
    Pa, Pb, Ea, Eb = power(a, n, m), power(x, n, m), power(a, early, m), power(x, early, m)
    sp, ea = [], []
    for fc in bands:
        f1 = fc / 2 ** 0.5
        dd = [10 * np.log10(be(Pb, m, fs, f1 * 2 ** (j / 6), f1 * 2 ** ((j + 1) / 6)) /
                             be(Pa, m, fs, f1 * 2 ** (j / 6), f1 * 2 ** ((j + 1) / 6))) for j in range(6)]
        sp.append(np.sqrt(np.mean(np.square(dd))))
        ea.append(10 * np.log10(be(Eb, m, fs, f1, f1 * 2) / be(Ea, m, fs, f1, f1 * 2)))
    return np.array(sp), np.array(ea)
def pffdtd(kind, fs_out):
    u = h5py.File(d + 'pffdtd-%s.h5' % kind, 'r')['u_out'][...]
    at = pf if hall else pf + kind + '/'
    c = h5py.File(at + 'comms_out.h5', 'r')
    Ts = float(h5py.File(at + 'sim_consts.h5', 'r')['Ts'][()])
    alpha = c['out_alpha'][...]; diff = bool(c['diff'][()])
    r = np.sum((u * alpha.flat[:][:, None]).reshape((*alpha.shape, -1)), axis=1)
    # PFFDTD's own initial_process: a 4th-order 10 Hz high-pass with the integrator of its
    # differentiated source (process_outputs.py), then resampled to the WAVs' rate
    z, p, k = butter(4, 10 * 2 * np.pi, btype='high', analog=True, output='zpk')
    if diff: z = z[1:]
    zd, pd, kd = bilinear_zpk(z, p, k, 1 / Ts)
    r = sosfilt(zpk2sos(zd, pd, kd), r)
    fs_sim = 1 / Ts
    from fractions import Fraction
    fr = Fraction(fs_out / fs_sim).limit_denominator(2000)
    return [resample_poly(x, fr.numerator, fr.denominator) for x in r], fs_sim
names = ['stalls', 'rear', 'side_balcony', 'rear_balcony'] if hall else ['front', 'back']
ref = [wav('reference-fcc-d0.0025' if hall else 'reference-ppw24', n) for n in names]
fs = ref[0][0]
rows = {}
for run in ['7-point-d0.01', 'fcc-d0.01']:
    res = [metrics(ref[i][1], wav(run, n)[1], fs) for i, n in enumerate(names)]
    rows['roomsim ' + run] = res
import os
for kind in ['fcc'] if hall else ['cart', 'fcc']:
    if not os.path.exists(d + 'pffdtd-%s.h5' % kind):  # a run of roomsim's side alone
        continue
    outs, fs_sim = pffdtd(kind, fs)
    # one gain for all receivers: the level of the reference over 44 Hz - 1.4 kHz
    def band_energy(x):
        m = 1
        while m < len(x): m *= 2
        P = power(x, len(x), m); return be(P, m, fs, 44, 1414)
    k = range(len(names))
    g = np.sqrt(sum(band_energy(ref[i][1]) for i in k) / sum(band_energy(outs[i]) for i in k))
    res = [metrics(ref[i][1], g * outs[i], fs) for i in k]
    rows['PFFDTD ' + kind] = res
    print('PFFDTD %s: sim rate %.1f Hz, gain %.4g' % (kind, fs_sim, g))
print('%-31s %s' % ('band', '  '.join('%5s' % b for b in ('63', '125', '250', '500', '1k'))))
for k, res in rows.items():
    sp = np.max([r[0] for r in res], axis=0)
    ea = [max((r[1][b] for r in res), key=abs) for b in range(len(bands))]
    print('%-22s spectrum %s | early %s' % (k, ' '.join('%5.2f' % v for v in sp), ' '.join('%+5.2f' % v for v in ea)))

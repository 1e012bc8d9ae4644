//! The recipes of the default library, one file per family, in library order.
//! Every family file pushes its `Spec`s with the `atom!` macro; the order of the
//! calls below is the library order (and so every benchmark's atom ids).
use std::f64::consts::PI;

use super::dsp::*;
use super::synth::*;
use super::voices::*;
use super::{Spec, LIBRARY_SIZE};

mod alarms;
mod bells;
mod bubbling;
mod buzzes;
mod chirps;
mod crackle;
mod drums;
mod electronic;
mod engines;
mod horns;
mod mechanical;
mod music;
mod phone;
mod rain;
mod sirens;
mod ticks;
mod tones;
mod vocal;
mod whistles;
mod wind;

pub(super) fn all() -> Vec<Spec> {
    let mut v: Vec<Spec> = Vec::with_capacity(LIBRARY_SIZE);
    bells::push(&mut v);
    sirens::push(&mut v);
    engines::push(&mut v);
    drums::push(&mut v);
    whistles::push(&mut v);
    horns::push(&mut v);
    alarms::push(&mut v);
    ticks::push(&mut v);
    rain::push(&mut v);
    wind::push(&mut v);
    chirps::push(&mut v);
    buzzes::push(&mut v);
    phone::push(&mut v);
    music::push(&mut v);
    bubbling::push(&mut v);
    crackle::push(&mut v);
    mechanical::push(&mut v);
    electronic::push(&mut v);
    tones::push(&mut v);
    vocal::push(&mut v);
    v
}

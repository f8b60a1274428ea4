// Provider detection and the generated Dockerfiles (SPEC.md 2.1 project type rules): table tests.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config.js';
import { planBuild, type ProjectType } from '../../../src/build/detect.js';
import { OutputCap } from '../../../src/build/output.js';

const images = parseConfig({ SVC_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64'), SVC_BUILD_IMAGE_STATIC: 'local/static:1' }).buildImages;

describe('planBuild', () => {
  it.each<[string, string[], ProjectType, string, number | null]>([
    ['a root Dockerfile wins over everything', ['Dockerfile', 'package.json', 'index.html'], 'go', 'dockerfile', null],
    ['auto: index.html is static', ['index.html', 'style.css'], 'auto', 'static', 80],
    ['auto: package.json is node, even with index.html', ['index.html', 'package.json'], 'auto', 'node', 3000],
    ['auto: go.mod is go', ['go.mod', 'main.go'], 'auto', 'go', 8080],
    ['auto: pom.xml is java', ['pom.xml', 'src'], 'auto', 'java', 8080],
    ['auto: build.gradle is java', ['build.gradle'], 'auto', 'java', 8080],
    ['a chosen type skips detection', ['index.html', 'package.json'], 'static', 'static', 80],
  ])('%s', (_w, files, type, kind, port) => {
    const plan = planBuild(files, type, images);
    if (kind === 'dockerfile') expect(plan.kind).toBe('dockerfile');
    else expect(plan).toMatchObject({ kind: 'provider', provider: kind, port });
  });

  it.each<[ProjectType, string[], string]>([
    ['go', ['index.html'], 'project type go needs go.mod in the repository root'],
    ['node', ['go.mod'], 'project type node needs package.json in the repository root'],
    ['java', ['package.json'], 'project type java needs pom.xml or build.gradle in the repository root'],
    ['static', ['README.md'], 'project type static needs index.html in the repository root'],
    ['auto', ['README.md'], 'could not detect the project type: no Dockerfile, package.json, go.mod, pom.xml, build.gradle or index.html in the repository root'],
  ])('%s without its sentinel cannot plan', (type, files, message) => {
    expect(planBuild(files, type, images)).toEqual({ kind: 'error', message });
  });

  it('writes Dockerfiles from the overridable base images', () => {
    const plan = (files: string[], t: ProjectType) => {
      const p = planBuild(files, t, images);
      return p.kind === 'provider' ? p.dockerfile : '';
    };
    expect(plan(['index.html'], 'auto')).toBe(
      'FROM local/static:1\nCOPY . /srv\nEXPOSE 80\nENTRYPOINT []\nCMD ["caddy","file-server","--root","/srv","--listen",":80"]\n',
    );
    expect(plan(['package.json', 'package-lock.json'], 'auto')).toContain('FROM node:20-alpine\n');
    expect(plan(['package.json', 'package-lock.json'], 'auto')).toContain('RUN npm ci\n');
    expect(plan(['package.json'], 'auto')).toContain('RUN npm install\n');
    expect(plan(['package.json'], 'auto')).toContain('CMD ["npm","start"]');
    expect(plan(['go.mod'], 'auto')).toMatch(/^FROM golang:1-alpine AS build\n[\s\S]*CGO_ENABLED=0 go build[\s\S]*\nFROM alpine:3\n/);
    expect(plan(['pom.xml'], 'auto')).toMatch(/^FROM maven:3-eclipse-temurin-21 AS build\n[\s\S]*\nFROM eclipse-temurin:21-jre\n/);
    expect(plan(['build.gradle'], 'auto')).toMatch(/^FROM gradle:8-jdk21 AS build\n/);
  });
});

describe('OutputCap', () => {
  it('passes 2,000 lines, then one event saying how many were cut, and keeps the last 20', () => {
    const seen: string[] = [];
    const cap = new OutputCap((l) => seen.push(l));
    for (let i = 1; i <= 2500; i++) cap.push(`line ${i}`);
    cap.end();
    expect(seen).toHaveLength(2001);
    expect(seen[1999]).toBe('line 2000');
    expect(seen[2000]).toBe('output cut: 500 more lines not shown (2500 in all)');
    expect(cap.tail()).toHaveLength(20);
    expect(cap.tail().at(-1)).toBe('line 2500');
  });

  it('says nothing extra when under the cap', () => {
    const seen: string[] = [];
    const cap = new OutputCap((l) => seen.push(l));
    cap.push('only');
    cap.end();
    expect(seen).toEqual(['only']);
  });
});
